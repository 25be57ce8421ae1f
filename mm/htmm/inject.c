// SPDX-License-Identifier: GPL-2.0-only
/*
 * htmm debugfs files (CONFIG_HTMM_DEBUG), for tests:
 *
 *   inject      write-only.  One sample per line, fed to the same ingestion
 *               code as the real sources:
 *                 <pid> <vaddr> <kind>      a process and a user address
 *                 <paddr> <kind>            a physical address
 *               kind is load-fast, load-slow or store; a pid is decimal
 *               without a leading zero, addresses are C style (decimal,
 *               0x hex) and a vaddr is not 0.  A write with any malformed
 *               line fails with -EINVAL and injects nothing.
 *   page_info   write "<pid> <vaddr>" (the same rules), then read one line
 *               describing the classification state of that page.
 *               A page under migration (inject's too) is looked up once
 *               the migration has ended.
 *   perf_counters  read-only: perf counters htmm holds right now.
 *   rings       read-only: "cpu<N> pushed <n> dropped <n>" per CPU ring.
 */
#define pr_fmt(fmt) "htmm: " fmt

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kstrtox.h>
#include <linux/mm.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

#include "internal.h"

#define HTMM_INJECT_MAX_WRITE	(256 * 1024)

struct htmm_inject_rec {
	unsigned long addr;
	pid_t pid;		/* 0 for a physical address */
	enum htmm_kind kind;
};

static int htmm_parse_kind(const char *s, enum htmm_kind *kind)
{
	if (!strcmp(s, "load-fast"))
		*kind = HTMM_LOAD_FAST;
	else if (!strcmp(s, "load-slow"))
		*kind = HTMM_LOAD_SLOW;
	else if (!strcmp(s, "store"))
		*kind = HTMM_STORE;
	else
		return -EINVAL;
	return 0;
}

/*
 * A pid in decimal: "010" and "0x8" are refused rather than read as
 * another process than the one the writer may have meant.
 */
static int htmm_parse_pid(const char *s, pid_t *pid)
{
	unsigned int val;

	if (*s < '1' || *s > '9' || kstrtouint(s, 10, &val) ||
	    val > PID_MAX_LIMIT) {
		pr_info_ratelimited("pids are decimal, without a leading zero\n");
		return -EINVAL;
	}
	*pid = val;
	return 0;
}

/* A user address: C style, not 0. */
static int htmm_parse_vaddr(const char *s, unsigned long *vaddr)
{
	if (kstrtoul(s, 0, vaddr) || !*vaddr)
		return -EINVAL;
	return 0;
}

/* Split @line into at most @max words; return the count, or -EINVAL. */
static int htmm_split_words(char *line, char **words, int max)
{
	int n = 0;
	char *w;

	while ((w = strsep(&line, " \t")) != NULL) {
		if (!*w)
			continue;
		if (n == max)
			return -EINVAL;
		words[n++] = w;
	}
	return n;
}

static int htmm_parse_record(char *line, struct htmm_inject_rec *rec)
{
	char *w[3];
	int n;

	n = htmm_split_words(line, w, 3);
	if (n == 3) {
		if (htmm_parse_pid(w[0], &rec->pid) ||
		    htmm_parse_vaddr(w[1], &rec->addr))
			return -EINVAL;
		return htmm_parse_kind(w[2], &rec->kind);
	}
	if (n == 2) {
		rec->pid = 0;
		if (kstrtoul(w[0], 0, &rec->addr))
			return -EINVAL;
		return htmm_parse_kind(w[1], &rec->kind);
	}
	return -EINVAL;
}

static ssize_t htmm_inject_write(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct htmm_inject_rec *recs;
	char *buf, *p, *line;
	size_t nr = 0, max, i;
	int err = 0;

	if (count > HTMM_INJECT_MAX_WRITE)
		return -E2BIG;
	buf = memdup_user_nul(ubuf, count);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	max = count / 4 + 1;	/* the shortest record is "0 store" + "\n" */
	recs = kvmalloc_array(max, sizeof(*recs), GFP_KERNEL);
	if (!recs) {
		kfree(buf);
		return -ENOMEM;
	}
	p = buf;
	while ((line = strsep(&p, "\n")) != NULL) {
		if (!*strim(line))
			continue;
		if (nr == max || htmm_parse_record(line, &recs[nr])) {
			err = -EINVAL;
			break;
		}
		nr++;
	}
	if (!err && !nr)
		err = -EINVAL;
	for (i = 0; !err && i < nr; i++) {
		if (recs[i].pid) {
			htmm_ingest_vaddr(recs[i].pid, recs[i].addr, recs[i].kind,
					  HTMM_SRC_INJECT);
		} else {
			struct page *page = pfn_to_online_page(PHYS_PFN(recs[i].addr));

			if (page)
				htmm_ingest_page(page, recs[i].kind,
						 HTMM_SRC_INJECT);
		}
		cond_resched();
	}
	kvfree(recs);
	kfree(buf);
	return err ? err : count;
}

static const struct file_operations htmm_inject_fops = {
	.owner = THIS_MODULE,
	.write = htmm_inject_write,
	.llseek = noop_llseek,
};

/* page_info: the query of a write, answered by the next read. */
struct htmm_query {
	char answer[256];
	size_t len;
};

static int htmm_page_info_open(struct inode *inode, struct file *file)
{
	struct htmm_query *q = kzalloc(sizeof(*q), GFP_KERNEL);

	if (!q)
		return -ENOMEM;
	file->private_data = q;
	return nonseekable_open(inode, file);
}

static int htmm_page_info_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t htmm_page_info_write(struct file *file, const char __user *ubuf,
				    size_t count, loff_t *ppos)
{
	struct htmm_query *q = file->private_data;
	struct htmm_page_info info;
	unsigned long vaddr;
	struct page *page;
	pid_t pid;
	char buf[64], *w[2], *s = buf;
	int err, nid;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (htmm_split_words(strim(s), w, 2) != 2 ||
	    htmm_parse_pid(w[0], &pid) || htmm_parse_vaddr(w[1], &vaddr))
		return -EINVAL;
	page = htmm_get_user_page(pid, vaddr);
	if (IS_ERR(page))
		return PTR_ERR(page);
	err = htmm_page_info(page, &info);
	nid = page_to_nid(page);
	folio_put(page_folio(page));
	if (err)
		return err;
	q->len = scnprintf(q->answer, sizeof(q->answer),
			   "count %u bin %u folio_count %u folio_bin %u nr_pages %u epoch %u hot %d flags %#x mbin %u moved_ms %u nid %d\n",
			   info.count, info.bin, info.folio_count,
			   info.folio_bin, info.nr_pages, info.epoch, info.hot,
			   info.flags, info.mbin, info.moved_ms, nid);
	return count;
}

static ssize_t htmm_page_info_read(struct file *file, char __user *ubuf,
				   size_t count, loff_t *ppos)
{
	struct htmm_query *q = file->private_data;

	return simple_read_from_buffer(ubuf, count, ppos, q->answer, q->len);
}

static const struct file_operations htmm_page_info_fops = {
	.owner = THIS_MODULE,
	.open = htmm_page_info_open,
	.release = htmm_page_info_release,
	.read = htmm_page_info_read,
	.write = htmm_page_info_write,
	.llseek = noop_llseek,
};

static int htmm_perf_counters_get(void *data, u64 *val)
{
	*val = htmm_perf_nr_counters();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(htmm_perf_counters_fops, htmm_perf_counters_get,
			 NULL, "%llu\n");

static int htmm_rings_seq_show(struct seq_file *m, void *v)
{
	htmm_rings_show(m);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(htmm_rings_seq);

int __init htmm_debugfs_init(void)
{
	struct dentry *dir = debugfs_create_dir("htmm", NULL);

	debugfs_create_file("inject", 0200, dir, NULL, &htmm_inject_fops);
	debugfs_create_file("page_info", 0600, dir, NULL, &htmm_page_info_fops);
	debugfs_create_file("perf_counters", 0400, dir, NULL,
			    &htmm_perf_counters_fops);
	debugfs_create_file("rings", 0400, dir, NULL, &htmm_rings_seq_fops);
	return 0;
}
