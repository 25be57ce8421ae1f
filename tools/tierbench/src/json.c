// SPDX-License-Identifier: GPL-2.0
/* tierbench: a small JSON writer and a strict JSON validator. */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tierbench.h"

/* ---------------------------------------------------------------- writer */

static void indent(struct tb_json *j)
{
	int i;

	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void put_string(FILE *f, const char *s)
{
	static const char special[] = "\"\\\n\t\r", escaped[] = "\"\\ntr";

	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = *s;
		const char *e = strchr(special, c);

		if (e) {
			fputc('\\', f);
			fputc(escaped[e - special], f);
		} else if (c < 0x20) {
			fprintf(f, "\\u%04x", c);
		} else {
			fputc(c, f);
		}
	}
	fputc('"', f);
}

static void member(struct tb_json *j, const char *key)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = 1;
	indent(j);
	if (key) {
		put_string(j->f, key);
		fputs(": ", j->f);
	}
}

void tb_json_begin(struct tb_json *j, FILE *f)
{
	memset(j, 0, sizeof(*j));
	j->f = f;
	fputc('{', f);
	j->depth = 1;
}

void tb_json_end(struct tb_json *j)
{
	j->depth = 0;
	indent(j);
	fputs("}\n", j->f);
	fflush(j->f);
}

void tb_json_tool(struct tb_json *j, FILE *f, const char *tool)
{
	tb_json_begin(j, f);
	tb_json_str(j, "tool", tool);
	tb_json_str(j, "version", TB_VERSION);
}

static void open_nested(struct tb_json *j, const char *key, char bracket)
{
	member(j, key);
	fputc(bracket, j->f);
	j->depth++;
	j->need_comma[j->depth] = 0;
}

static void close_nested(struct tb_json *j, char bracket)
{
	j->depth--;
	indent(j);
	fputc(bracket, j->f);
}

void tb_json_obj(struct tb_json *j, const char *key)
{
	open_nested(j, key, '{');
}

void tb_json_obj_end(struct tb_json *j)
{
	close_nested(j, '}');
}

void tb_json_arr(struct tb_json *j, const char *key)
{
	open_nested(j, key, '[');
}

void tb_json_arr_end(struct tb_json *j)
{
	close_nested(j, ']');
}

void tb_json_str(struct tb_json *j, const char *key, const char *v)
{
	member(j, key);
	put_string(j->f, v);
}

void tb_json_num(struct tb_json *j, const char *key, double v, int decimals)
{
	member(j, key);
	if (!isfinite(v))
		fputs("null", j->f);
	else
		fprintf(j->f, "%.*f", decimals, v);
}

void tb_json_int(struct tb_json *j, const char *key, long long v)
{
	member(j, key);
	fprintf(j->f, "%lld", v);
}

void tb_json_bool(struct tb_json *j, const char *key, int v)
{
	member(j, key);
	fputs(v ? "true" : "false", j->f);
}

/* ------------------------------------------------------------- validator */

struct jp {
	const char *s;
	size_t n, i;
	int depth;
	char *err;
	size_t errlen;
};

static int jp_fail(struct jp *p, const char *what)
{
	snprintf(p->err, p->errlen, "offset %zu: %s", p->i, what);
	return -1;
}

static void jp_ws(struct jp *p)
{
	while (p->i < p->n && (p->s[p->i] == ' ' || p->s[p->i] == '\t' ||
			       p->s[p->i] == '\n' || p->s[p->i] == '\r'))
		p->i++;
}

static int jp_lit(struct jp *p, const char *lit)
{
	size_t l = strlen(lit);

	if (p->n - p->i < l || memcmp(p->s + p->i, lit, l))
		return jp_fail(p, "bad literal");
	p->i += l;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

static int jp_string(struct jp *p)
{
	p->i++;	/* opening quote */
	while (p->i < p->n) {
		unsigned char c = p->s[p->i];

		if (c == '"') {
			p->i++;
			return 0;
		}
		if (c < 0x20)
			return jp_fail(p, "control character in string");
		if (c == '\\') {
			p->i++;
			if (p->i >= p->n)
				break;
			c = p->s[p->i];
			if (c == 'u') {
				int k;

				for (k = 1; k <= 4; k++)
					if (p->i + k >= p->n ||
					    hexval(p->s[p->i + k]) < 0)
						return jp_fail(p, "bad \\u escape");
				p->i += 4;
			} else if (!strchr("\"\\/bfnrt", c)) {
				return jp_fail(p, "bad escape");
			}
		}
		p->i++;
	}
	return jp_fail(p, "unterminated string");
}

static int digits(struct jp *p)
{
	size_t start = p->i;

	while (p->i < p->n && p->s[p->i] >= '0' && p->s[p->i] <= '9')
		p->i++;
	return p->i > start ? 0 : -1;
}

static int jp_number(struct jp *p)
{
	if (p->s[p->i] == '-')
		p->i++;
	if (p->i < p->n && p->s[p->i] == '0') {
		p->i++;
	} else if (digits(p)) {
		return jp_fail(p, "bad number");
	}
	if (p->i < p->n && p->s[p->i] == '.') {
		p->i++;
		if (digits(p))
			return jp_fail(p, "bad fraction");
	}
	if (p->i < p->n && (p->s[p->i] == 'e' || p->s[p->i] == 'E')) {
		p->i++;
		if (p->i < p->n && (p->s[p->i] == '+' || p->s[p->i] == '-'))
			p->i++;
		if (digits(p))
			return jp_fail(p, "bad exponent");
	}
	return 0;
}

static int jp_value(struct jp *p);

static int jp_container(struct jp *p, char close)
{
	int first = 1;

	if (++p->depth > 64)
		return jp_fail(p, "nesting too deep");
	p->i++;
	for (;;) {
		jp_ws(p);
		if (p->i >= p->n)
			return jp_fail(p, "unterminated container");
		if (p->s[p->i] == close) {
			/* only reachable for an empty container */
			if (!first)
				return jp_fail(p, "trailing comma");
			p->i++;
			p->depth--;
			return 0;
		}
		if (close == '}') {
			if (p->s[p->i] != '"')
				return jp_fail(p, "expected key");
			if (jp_string(p))
				return -1;
			jp_ws(p);
			if (p->i >= p->n || p->s[p->i] != ':')
				return jp_fail(p, "expected ':'");
			p->i++;
		}
		if (jp_value(p))
			return -1;
		first = 0;
		jp_ws(p);
		if (p->i < p->n && p->s[p->i] == ',') {
			p->i++;
			jp_ws(p);
			if (p->i < p->n && p->s[p->i] == close)
				return jp_fail(p, "trailing comma");
			continue;
		}
		if (p->i < p->n && p->s[p->i] == close) {
			p->i++;
			p->depth--;
			return 0;
		}
		return jp_fail(p, "expected ',' or end of container");
	}
}

static int jp_value(struct jp *p)
{
	jp_ws(p);
	if (p->i >= p->n)
		return jp_fail(p, "expected a value");
	switch (p->s[p->i]) {
	case '{':
		return jp_container(p, '}');
	case '[':
		return jp_container(p, ']');
	case '"':
		return jp_string(p);
	case 't':
		return jp_lit(p, "true");
	case 'f':
		return jp_lit(p, "false");
	case 'n':
		return jp_lit(p, "null");
	default:
		if (p->s[p->i] == '-' ||
		    (p->s[p->i] >= '0' && p->s[p->i] <= '9'))
			return jp_number(p);
		return jp_fail(p, "unexpected character");
	}
}

int tb_json_validate(const char *text, size_t len, char *err, size_t errlen)
{
	struct jp p = { text, len, 0, 0, err, errlen };

	if (errlen)
		err[0] = 0;
	if (jp_value(&p))
		return -1;
	jp_ws(&p);
	if (p.i != p.n)
		return jp_fail(&p, "trailing data after the value");
	return 0;
}

int tb_json_has_key(const char *text, const char *key)
{
	size_t kl = strlen(key);
	const char *q = text;

	while ((q = strchr(q, '"'))) {
		const char *e = q + 1 + kl;

		if (!strncmp(q + 1, key, kl) && *e == '"') {
			e++;
			while (*e == ' ' || *e == '\n' || *e == '\t' ||
			       *e == '\r')
				e++;
			if (*e == ':')
				return 1;
		}
		q++;
	}
	return 0;
}

/*
 * tierbench json-check [--require KEY[,KEY...]] [FILE]
 * Validates JSON read from FILE or stdin; used by guest-smoke.sh, where no
 * other JSON parser exists.
 */
int cmd_json_check(int argc, char **argv)
{
	const char *req = NULL, *file = NULL;
	char err[160], *buf = NULL;
	size_t len = 0, cap = 0;
	FILE *f = stdin;
	int i;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: tierbench json-check [--require KEY[,KEY...]] [FILE]\n"
			       "Validate JSON from FILE (or stdin); exit 0 if valid and every\n"
			       "required key is present.\n");
			return TB_EXIT_OK;
		} else if (!strcmp(argv[i], "--require") && i + 1 < argc) {
			req = argv[++i];
		} else if (argv[i][0] == '-' && argv[i][1]) {
			tb_err("unknown option '%s' (see --help)", argv[i]);
			return TB_EXIT_USAGE;
		} else if (!file) {
			file = argv[i];
		} else {
			tb_err("more than one file given");
			return TB_EXIT_USAGE;
		}
	}
	if (file && strcmp(file, "-")) {
		f = fopen(file, "r");
		if (!f) {
			tb_err("cannot open %s", file);
			return TB_EXIT_FAIL;
		}
	}
	for (;;) {
		size_t got;

		if (cap - len < 4096) {
			char *nb = realloc(buf, cap + 65536);

			if (!nb) {
				tb_err("out of memory");
				return TB_EXIT_FAIL;
			}
			buf = nb;
			cap += 65536;
		}
		got = fread(buf + len, 1, cap - len - 1, f);
		if (!got)
			break;
		len += got;
	}
	buf[len] = 0;
	if (f != stdin)
		fclose(f);
	if (tb_json_validate(buf, len, err, sizeof(err))) {
		printf("invalid JSON: %s\n", err);
		free(buf);
		return TB_EXIT_FAIL;
	}
	if (req) {
		char *copy = strdup(req), *save = NULL, *k;
		int missing = 0;

		for (k = strtok_r(copy, ",", &save); k;
		     k = strtok_r(NULL, ",", &save)) {
			if (!tb_json_has_key(buf, k)) {
				printf("missing key: %s\n", k);
				missing = 1;
			}
		}
		free(copy);
		if (missing) {
			free(buf);
			return TB_EXIT_FAIL;
		}
	}
	printf("valid JSON\n");
	free(buf);
	return TB_EXIT_OK;
}
