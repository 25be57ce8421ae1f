/* SPDX-License-Identifier: GPL-2.0-only */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM htmm

#if !defined(_TRACE_HTMM_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_HTMM_H

#include <linux/tracepoint.h>

/* One batch of samples from a source, and what ingestion made of it. */
TRACE_EVENT(htmm_sample_batch,
	    TP_PROTO(unsigned int source, unsigned long nr,
		     unsigned long accounted, unsigned long dropped),
	    TP_ARGS(source, nr, accounted, dropped),
	    TP_STRUCT__entry(__field(unsigned int, source)
			     __field(unsigned long, nr)
			     __field(unsigned long, accounted)
			     __field(unsigned long, dropped)),
	    TP_fast_assign(__entry->source = source;
			   __entry->nr = nr;
			   __entry->accounted = accounted;
			   __entry->dropped = dropped;),
	    TP_printk("source=%u nr=%lu accounted=%lu dropped=%lu",
		      __entry->source, __entry->nr, __entry->accounted,
		      __entry->dropped)
);

/* A cgroup's hot or warm threshold changed. */
TRACE_EVENT(htmm_threshold,
	    TP_PROTO(unsigned short memcg_id, unsigned int hot, unsigned int warm,
		     unsigned long long capacity, unsigned long long hot_pages),
	    TP_ARGS(memcg_id, hot, warm, capacity, hot_pages),
	    TP_STRUCT__entry(__field(unsigned short, memcg_id)
			     __field(unsigned int, hot)
			     __field(unsigned int, warm)
			     __field(unsigned long long, capacity)
			     __field(unsigned long long, hot_pages)),
	    TP_fast_assign(__entry->memcg_id = memcg_id;
			   __entry->hot = hot;
			   __entry->warm = warm;
			   __entry->capacity = capacity;
			   __entry->hot_pages = hot_pages;),
	    TP_printk("memcg=%u hot=%u warm=%u capacity=%llu hot_pages=%llu",
		      __entry->memcg_id, __entry->hot, __entry->warm,
		      __entry->capacity, __entry->hot_pages)
);

/* A cgroup's access counts were halved. */
TRACE_EVENT(htmm_cooling,
	    TP_PROTO(unsigned short memcg_id, unsigned int epoch),
	    TP_ARGS(memcg_id, epoch),
	    TP_STRUCT__entry(__field(unsigned short, memcg_id)
			     __field(unsigned int, epoch)),
	    TP_fast_assign(__entry->memcg_id = memcg_id;
			   __entry->epoch = epoch;),
	    TP_printk("memcg=%u epoch=%u", __entry->memcg_id, __entry->epoch)
);

TRACE_EVENT(htmm_split_decision,
	    TP_PROTO(unsigned short memcg_id, unsigned int share_now,
		     unsigned int share_split, unsigned long long nr_skewed,
		     unsigned long long nr_split, unsigned long long nr_room),
	    TP_ARGS(memcg_id, share_now, share_split, nr_skewed, nr_split,
		    nr_room),
	    TP_STRUCT__entry(__field(unsigned short, memcg_id)
			     __field(unsigned int, share_now)
			     __field(unsigned int, share_split)
			     __field(unsigned long long, nr_skewed)
			     __field(unsigned long long, nr_split)
			     __field(unsigned long long, nr_room)),
	    TP_fast_assign(__entry->memcg_id = memcg_id;
			   __entry->share_now = share_now;
			   __entry->share_split = share_split;
			   __entry->nr_skewed = nr_skewed;
			   __entry->nr_split = nr_split;
			   __entry->nr_room = nr_room;),
	    TP_printk("memcg=%u hit_permille=%u split_hit_permille=%u skewed=%llu split=%llu split_for_room=%llu",
		      __entry->memcg_id, __entry->share_now,
		      __entry->share_split, __entry->nr_skewed,
		      __entry->nr_split, __entry->nr_room)
);

#endif /* _TRACE_HTMM_H */

/* This part must be outside protection */
#include <trace/define_trace.h>
