// SPDX-License-Identifier: GPL-2.0
/*
 * htmm(8): the record file: a writer (CSV or JSON Lines) whose column set
 * is fixed by its first row, and a reader of both formats into a table of
 * numbers for "htmm report".  No system access.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "htmm.h"

int hm_format_parse(const char *s, enum hm_format *f)
{
	if (!strcmp(s, "csv"))
		*f = HM_FMT_CSV;
	else if (!strcmp(s, "jsonl") || !strcmp(s, "json"))
		*f = HM_FMT_JSONL;
	else
		return -EINVAL;
	return 0;
}

/* .jsonl, .json and .ndjson files are JSON Lines; anything else CSV. */
enum hm_format hm_format_guess(const char *path)
{
	const char *dot = path ? strrchr(path, '.') : NULL;

	if (dot && (!strcmp(dot, ".jsonl") || !strcmp(dot, ".json") ||
		    !strcmp(dot, ".ndjson")))
		return HM_FMT_JSONL;
	return HM_FMT_CSV;
}

int hm_writer_header(struct hm_writer *w, const char *const *cols, int ncols)
{
	int i;

	w->cols = calloc(ncols, sizeof(char *));
	if (!w->cols)
		return -ENOMEM;
	for (i = 0; i < ncols; i++) {
		w->cols[i] = strdup(cols[i]);
		if (!w->cols[i])
			return -ENOMEM;
	}
	w->ncols = ncols;
	if (w->fmt == HM_FMT_CSV) {
		for (i = 0; i < ncols; i++)
			fprintf(w->f, "%s%s", i ? "," : "", cols[i]);
		fputc('\n', w->f);
	}
	return ferror(w->f) ? -EIO : 0;
}

/* One row: @vals[i] is column i's number as text, or NULL (missing). */
int hm_writer_row(struct hm_writer *w, const char *const *vals)
{
	int i;

	if (w->fmt == HM_FMT_JSONL)
		fputc('{', w->f);
	for (i = 0; i < w->ncols; i++) {
		if (w->fmt == HM_FMT_CSV)
			fprintf(w->f, "%s%s", i ? "," : "", vals[i] ? vals[i] : "");
		else
			fprintf(w->f, "%s\"%s\":%s", i ? "," : "", w->cols[i],
				vals[i] ? vals[i] : "null");
	}
	fputs(w->fmt == HM_FMT_JSONL ? "}\n" : "\n", w->f);
	if (fflush(w->f) || ferror(w->f))
		return -EIO;
	return 0;
}

void hm_writer_free(struct hm_writer *w)
{
	int i;

	for (i = 0; i < w->ncols && w->cols; i++)
		free(w->cols[i]);
	free(w->cols);
	w->cols = NULL;
	w->ncols = 0;
}

/* ------------------------------------------------------------- reader */

static int table_addcol(struct hm_table *t, const char *name, size_t len)
{
	char **c = realloc(t->cols, (t->ncols + 1) * sizeof(char *));

	if (!c)
		return -ENOMEM;
	t->cols = c;
	t->cols[t->ncols] = strndup(name, len);
	if (!t->cols[t->ncols])
		return -ENOMEM;
	t->ncols++;
	return 0;
}

/* A new row of NANs; returns it or NULL. */
static double *table_addrow(struct hm_table *t)
{
	double *row;
	int i;

	if (t->nrows == t->cap) {
		int cap = t->cap ? t->cap * 2 : 64;
		double *v = realloc(t->v, (size_t)cap * t->ncols * sizeof(double));

		if (!v)
			return NULL;
		t->v = v;
		t->cap = cap;
	}
	row = t->v + (size_t)t->nrows++ * t->ncols;
	for (i = 0; i < t->ncols; i++)
		row[i] = NAN;
	return row;
}

static double parse_num(const char *s, size_t len)
{
	char buf[64], *end;
	double v;

	if (!len || len >= sizeof(buf))
		return NAN;
	memcpy(buf, s, len);
	buf[len] = '\0';
	v = strtod(buf, &end);
	return *end ? NAN : v;
}

static int csv_line(struct hm_table *t, const char *line, size_t len,
		    bool header)
{
	const char *p = line, *end = line + len, *c;
	double *row = NULL;
	int i = 0;

	if (!header) {
		row = table_addrow(t);
		if (!row)
			return -ENOMEM;
	}
	while (p <= end) {
		c = memchr(p, ',', end - p);
		if (!c)
			c = end;
		if (header && table_addcol(t, p, c - p))
			return -ENOMEM;
		if (!header && i < t->ncols)
			row[i] = parse_num(p, c - p);
		i++;
		p = c + 1;
	}
	return 0;
}

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t')
		p++;
	return p;
}

/* A JSON string, at its opening quote; *@end after its closing one. */
static int json_string(const char *p, const char **s, size_t *len,
		       const char **end)
{
	const char *q;

	if (*p != '"')
		return -EINVAL;
	for (q = p + 1; *q && *q != '"' && *q != '\n'; q++)
		if (*q == '\\' && q[1])
			q++;
	if (*q != '"')
		return -EINVAL;
	*s = p + 1;
	*len = q - p - 1;
	*end = q + 1;
	return 0;
}

/* A number, null, true, false or a string (NAN): *@end after it. */
static double json_value(const char *p, const char **end)
{
	const char *s;
	size_t len;
	char *e;
	double v;

	if (!strncmp(p, "null", 4) || !strncmp(p, "true", 4)) {
		*end = p + 4;
		return NAN;
	}
	if (!strncmp(p, "false", 5)) {
		*end = p + 5;
		return NAN;
	}
	if (*p == '"') {
		if (json_string(p, &s, &len, end))
			*end = p;
		return NAN;
	}
	v = strtod(p, &e);
	*end = e;
	return e == p ? NAN : v;
}

static int col_index(const struct hm_table *t, const char *s, size_t len,
		     int hint)
{
	int i;

	if (hint < t->ncols && strlen(t->cols[hint]) == len &&
	    !strncmp(t->cols[hint], s, len))
		return hint;
	for (i = 0; i < t->ncols; i++)
		if (strlen(t->cols[i]) == len && !strncmp(t->cols[i], s, len))
			return i;
	return -1;
}

/* One flat JSON object; the first one fixes the columns. */
static int json_line(struct hm_table *t, const char *p, bool first)
{
	double vals[1024];
	int keys[1024], n = 0, i;
	const char *s, *end;
	double *row;
	size_t len;

	p = skip_ws(p);
	if (*p++ != '{')
		return -EINVAL;
	for (p = skip_ws(p); *p != '}'; p = skip_ws(p)) {
		if (n == 1024 || json_string(p, &s, &len, &end))
			return -EINVAL;
		p = skip_ws(end);
		if (*p++ != ':')
			return -EINVAL;
		vals[n] = json_value(skip_ws(p), &end);
		if (end == skip_ws(p))
			return -EINVAL;
		if (first && table_addcol(t, s, len))
			return -ENOMEM;
		keys[n] = first ? t->ncols - 1 : col_index(t, s, len, n);
		n++;
		p = skip_ws(end);
		if (*p == ',')
			p++;
		else if (*p != '}')
			return -EINVAL;
	}
	row = table_addrow(t);
	if (!row)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		if (keys[i] >= 0)
			row[keys[i]] = vals[i];
	return 0;
}

/* Parse a whole record (CSV or JSON Lines, told by its first character). */
int hm_table_parse(const char *text, struct hm_table *t)
{
	const char *p = text, *nl;
	bool json = *skip_ws(p) == '{', first = true;
	int err = 0, line = 0;

	memset(t, 0, sizeof(*t));
	for (; *p && !err; p = *nl ? nl + 1 : nl) {
		nl = strchrnul(p, '\n');
		line++;
		if (nl == p || *p == '#' || (nl == p + 1 && p[0] == '\r'))
			continue;
		if (json)
			err = json_line(t, p, first);
		else
			err = csv_line(t, p, nl - p - (nl[-1] == '\r'), first);
		first = false;
	}
	if (err) {
		hm_err("malformed record at line %d", line);
		return err;
	}
	if (!t->ncols) {
		hm_err("empty record");
		return -EINVAL;
	}
	return 0;
}

int hm_table_load(const char *path, struct hm_table *t)
{
	char *text = hm_slurp(path, NULL);
	int err;

	memset(t, 0, sizeof(*t));
	if (!text) {
		err = errno;
		hm_err("cannot read %s: %s", path, strerror(err));
		return -err;
	}
	err = hm_table_parse(text, t);
	free(text);
	return err;
}

void hm_table_free(struct hm_table *t)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		free(t->cols[i]);
	free(t->cols);
	free(t->v);
	memset(t, 0, sizeof(*t));
}

int hm_table_col(const struct hm_table *t, const char *name)
{
	return col_index(t, name, strlen(name), 0);
}

double hm_table_get(const struct hm_table *t, int row, int col)
{
	if (row < 0 || row >= t->nrows || col < 0 || col >= t->ncols)
		return NAN;
	return t->v[(size_t)row * t->ncols + col];
}
