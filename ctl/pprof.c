// SPDX-License-Identifier: GPL-2.0
/*
 * xprobectl trace --pprof FILE: the session's stacks as a pprof profile
 * (gzip-compressed profile.proto, encoded with protobuf-c), which go tool
 * pprof, Pyroscope and Parca read.
 *
 * The stacks are those of --folded: the fold map's (traced functions,
 * outermost first, at most TRACE_FOLD_DEPTH; what the thread was doing:
 * on CPU, or off CPU for a cause; with -W, who ended the wait) -> ns. One
 * sample per entry, its leaf first as the format wants: the cause as a
 * frame of its own ("[sleep]") under the innermost function, as in
 * --folded, so pprof's views show where each function waited and why. Its
 * values, one per sample type, all nanoseconds: wall, on_cpu, off_cpu,
 * then one per cause; wall is the default. The waker goes in a label
 * ("woken_by"). A function is one location (no addresses: the profile is
 * symbolized already, and one call site per function is what the shadow
 * stack knows).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "profile.pb-c.h"
#include "tracer.h"
#include "wakers.h"
#include "trace.skel.h"

typedef Xprobes__Pprof__Profile Profile;
typedef Xprobes__Pprof__ValueType ValueType;
typedef Xprobes__Pprof__Sample Sample;
typedef Xprobes__Pprof__Label Label;
typedef Xprobes__Pprof__Location Location;
typedef Xprobes__Pprof__Line Line;
typedef Xprobes__Pprof__Function Function;
typedef Xprobes__Pprof__Mapping Mapping;

enum { V_WALL, V_ON, V_OFF, V_CAUSE0, NVALUES = V_CAUSE0 + NR_CAUSES };

/* The string table: index 0 is "", the rest as added (a name once). */
struct strtab {
	char **s;
	size_t n, cap;
};

static int64_t str_id(struct strtab *t, const char *str)
{
	size_t i;
	char **g;

	for (i = 0; i < t->n; i++)
		if (!strcmp(t->s[i], str))
			return (int64_t)i;
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 64;
		g = realloc(t->s, t->cap * sizeof(*g));
		if (!g)
			return 0;
		t->s = g;
	}
	t->s[t->n] = strdup(str);
	return t->s[t->n] ? (int64_t)t->n++ : 0;
}

/* A profile under construction; everything in it is freed by prof_free(). */
struct prof {
	Profile p;
	struct strtab st;
	ValueType *types;
	Function *funcs;
	Location *locs;
	size_t nlocs;		/* locs made (their one-line arrays freed with them) */
	Line *lines;
	Function **fp;
	Location **lp;
	ValueType **tp;
	Sample **samples;
	size_t nsamples, capsamples;
	Mapping *maps;		/* one per file of traced functions, the main binary first */
	Mapping **mp;
	size_t nmaps;
};

static void prof_free(struct prof *pr)
{
	size_t i;

	for (i = 0; i < pr->nsamples; i++) {
		Sample *sm = pr->samples[i];

		free(sm->location_id);
		free(sm->value);
		if (sm->n_label)
			free(sm->label[0]);
		free(sm->label);
		free(sm);
	}
	free(pr->samples);
	for (i = 0; i < pr->st.n; i++)
		free(pr->st.s[i]);
	free(pr->st.s);
	free(pr->types);
	free(pr->tp);
	free(pr->funcs);
	free(pr->fp);
	for (i = 0; pr->locs && i < pr->nlocs; i++)
		free(pr->locs[i].line);
	free(pr->locs);
	free(pr->lp);
	free(pr->lines);
	free(pr->maps);
	free(pr->mp);
}

/* The mapping of FILE (its id), added if new. */
static uint64_t map_id(struct prof *pr, const char *file)
{
	int64_t name = str_id(&pr->st, file);
	size_t i;

	for (i = 0; i < pr->nmaps; i++)
		if (pr->maps[i].filename == name)
			return pr->maps[i].id;
	xprobes__pprof__mapping__init(&pr->maps[i]);
	pr->maps[i].id = i + 1;
	pr->maps[i].filename = name;
	pr->maps[i].has_functions = 1;
	pr->mp[i] = &pr->maps[i];
	return pr->maps[pr->nmaps++].id;
}

/*
 * The sample types, and one function and location per traced function
 * (id i + 1) and per cause (id nfuncs + 1 + cause).
 */
static int prof_init(struct prof *pr, struct tsession *s)
{
	size_t nf = s->nfuncs + NR_CAUSES, i;
	char name[64];

	xprobes__pprof__profile__init(&pr->p);
	str_id(&pr->st, "");
	pr->types = calloc(NVALUES + 1, sizeof(*pr->types));
	pr->tp = calloc(NVALUES, sizeof(*pr->tp));
	pr->funcs = calloc(nf, sizeof(*pr->funcs));
	pr->fp = calloc(nf, sizeof(*pr->fp));
	pr->locs = calloc(nf, sizeof(*pr->locs));
	pr->lp = calloc(nf, sizeof(*pr->lp));
	pr->lines = calloc(nf, sizeof(*pr->lines));
	pr->nlocs = pr->locs ? nf : 0;
	pr->maps = calloc(nf, sizeof(*pr->maps));
	pr->mp = calloc(nf, sizeof(*pr->mp));
	if (!pr->types || !pr->tp || !pr->funcs || !pr->fp || !pr->locs || !pr->lp || !pr->lines ||
	    !pr->maps || !pr->mp)
		return -ENOMEM;
	for (i = 0; i <= NVALUES; i++) {
		ValueType *t = &pr->types[i];

		xprobes__pprof__value_type__init(t);
		if (i == V_WALL || i == NVALUES)	/* the last: period_type */
			snprintf(name, sizeof(name), "wall");
		else if (i == V_ON)
			snprintf(name, sizeof(name), "on_cpu");
		else if (i == V_OFF)
			snprintf(name, sizeof(name), "off_cpu");
		else
			snprintf(name, sizeof(name), "off_cpu_%s", trace_cause_name(i - V_CAUSE0));
		t->type = str_id(&pr->st, name);
		t->unit = str_id(&pr->st, "nanoseconds");
		if (i < NVALUES)
			pr->tp[i] = t;
	}
	for (i = 0; i < nf; i++) {
		Function *f = &pr->funcs[i];
		Location *l = &pr->locs[i];
		Line *ln = &pr->lines[i];

		xprobes__pprof__function__init(f);
		xprobes__pprof__location__init(l);
		xprobes__pprof__line__init(ln);
		f->id = l->id = ln->function_id = i + 1;
		if (i < (size_t)s->nfuncs) {
			f->name = f->system_name = str_id(&pr->st, s->funcs[i].name);
			f->filename = str_id(&pr->st, s->funcs[i].path);
			l->mapping_id = map_id(pr, s->funcs[i].path);
		} else {
			snprintf(name, sizeof(name), "[%s]", trace_cause_name(i - s->nfuncs));
			f->name = f->system_name = str_id(&pr->st, name);
		}
		pr->fp[i] = f;
		pr->lp[i] = l;
	}
	/* each location's one line: a pointer array of its own */
	for (i = 0; i < nf; i++) {
		Line **one = malloc(sizeof(*one));

		if (!one)
			return -ENOMEM;
		one[0] = &pr->lines[i];
		pr->locs[i].line = one;
		pr->locs[i].n_line = 1;
	}
	return 0;
}

static int add_sample(struct prof *pr, struct tsession *s, const struct fold_key *k,
		      uint64_t ns)
{
	uint32_t depth = k->depth < TRACE_FOLD_DEPTH ? k->depth : TRACE_FOLD_DEPTH, i, n = 0;
	Sample *sm = calloc(1, sizeof(*sm));
	char wb[256];

	if (!sm)
		return -ENOMEM;
	xprobes__pprof__sample__init(sm);
	sm->location_id = calloc(depth + 1, sizeof(*sm->location_id));
	sm->value = calloc(NVALUES, sizeof(*sm->value));
	if (!sm->location_id || !sm->value)
		goto nomem;
	if (k->kind && k->kind <= NR_CAUSES)		/* the cause, as the leaf */
		sm->location_id[n++] = s->nfuncs + k->kind;
	for (i = depth; i > 0; i--)
		if (k->funcs[i - 1] < (uint32_t)s->nfuncs)
			sm->location_id[n++] = k->funcs[i - 1] + 1;
	sm->n_location_id = n;
	sm->n_value = NVALUES;
	sm->value[V_WALL] = (int64_t)ns;
	if (!k->kind) {
		sm->value[V_ON] = (int64_t)ns;
	} else if (k->kind <= NR_CAUSES) {
		sm->value[V_OFF] = (int64_t)ns;
		sm->value[V_CAUSE0 + k->kind - 1] = (int64_t)ns;
	}
	if (k->waker) {
		Label *l = calloc(1, sizeof(*l));

		sm->label = calloc(1, sizeof(*sm->label));
		if (!l || !sm->label) {
			free(l);
			goto nomem;
		}
		xprobes__pprof__label__init(l);
		l->key = str_id(&pr->st, "woken_by");
		l->str = str_id(&pr->st, wakers_frame(s, k->waker, wb, sizeof(wb)));
		sm->label[0] = l;
		sm->n_label = 1;
	}
	if (pr->nsamples == pr->capsamples) {
		Sample **g;

		pr->capsamples = pr->capsamples ? 2 * pr->capsamples : 256;
		g = realloc(pr->samples, pr->capsamples * sizeof(*g));
		if (!g)
			goto nomem;
		pr->samples = g;
	}
	pr->samples[pr->nsamples++] = sm;
	return 0;
nomem:
	free(sm->location_id);
	free(sm->value);
	free(sm->label);
	free(sm);
	return -ENOMEM;
}

/* Write the encoded profile, gzip-compressed, to PATH. */
static int write_gz(const char *path, const uint8_t *buf, size_t len)
{
	gzFile gz = gzopen(path, "wb");
	int err = 0;

	if (!gz)
		return errno ? -errno : -ENOMEM;
	if (len && gzwrite(gz, buf, (unsigned int)len) != (int)len)
		err = -EIO;
	if (gzclose(gz) != Z_OK && !err)
		err = -EIO;
	return err;
}

int pprof_write(struct tsession *s, const char *path, uint64_t start_realtime_ns,
		uint64_t duration_ns)
{
	int fd = bpf_map__fd(s->skel->maps.fold), err;
	struct fold_key k, *prev = NULL;
	struct prof pr = { 0 };
	uint8_t *buf = NULL;
	size_t len;
	uint64_t ns;

	err = prof_init(&pr, s);
	while (!err && !bpf_map_get_next_key(fd, prev, &k)) {
		prev = &k;
		if (bpf_map_lookup_elem(fd, &k, &ns) || !ns)
			continue;
		err = add_sample(&pr, s, &k, ns);
	}
	if (err)
		goto out;
	pr.p.n_sample_type = NVALUES;
	pr.p.sample_type = pr.tp;
	pr.p.n_sample = pr.nsamples;
	pr.p.sample = pr.samples;
	pr.p.n_function = s->nfuncs + NR_CAUSES;
	pr.p.function = pr.fp;
	pr.p.n_location = s->nfuncs + NR_CAUSES;
	pr.p.location = pr.lp;
	pr.p.n_mapping = pr.nmaps;
	pr.p.mapping = pr.mp;
	pr.p.time_nanos = (int64_t)start_realtime_ns;
	pr.p.duration_nanos = (int64_t)duration_ns;
	pr.p.period_type = &pr.types[NVALUES];
	pr.p.period = 1;
	pr.p.default_sample_type = pr.types[V_WALL].type;	/* a string index */
	pr.p.n_string_table = pr.st.n;
	pr.p.string_table = pr.st.s;
	len = xprobes__pprof__profile__get_packed_size(&pr.p);
	buf = malloc(len ? len : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	xprobes__pprof__profile__pack(&pr.p, buf);
	err = write_gz(path, buf, len);
out:
	free(buf);
	prof_free(&pr);
	return err;
}
