// SPDX-License-Identifier: GPL-2.0
/*
 * Libraries loaded on first use (dso.h). Each function is looked up with
 * dlsym() into a pointer of its own header's type (__typeof__ at the
 * caller, DSO_PTR), so a call through it is checked as a direct call
 * would be; the soname is the one of the API the header describes (from
 * its version where it has one). A library that is missing
 * fails the command that needs it, with a line naming the package, and no
 * other (a direct link failed every command at exec instead). The Debian
 * package depends on these libraries by name (debian/control):
 * dpkg-shlibdeps sees only what is linked.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include "dso.h"

static pthread_mutex_t dso_lock = PTHREAD_MUTEX_INITIALIZER;

static int dso_open(struct dso *d)
{
	const struct dso_fn *f;
	const char *err;
	void *h;

	h = dlopen(d->soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		err = dlerror();
		snprintf(d->why, sizeof(d->why), "cannot load %s (%s): install %s",
			 d->soname, err ? err : "not found", d->package);
		return -1;
	}
	for (f = d->fns; f->name; f++) {
		dlerror();
		*f->slot = dlsym(h, f->name);
		if (!*f->slot) {
			snprintf(d->why, sizeof(d->why), "%s has no %s: install %s",
				 d->soname, f->name, d->package);
			dlclose(h);
			return -1;
		}
	}
	return 1;	/* kept loaded: the pointers point into it */
}

bool dso_load(struct dso *d, const char **why)
{
	pthread_mutex_lock(&dso_lock);
	if (!d->state)
		d->state = dso_open(d);
	pthread_mutex_unlock(&dso_lock);
	if (d->state < 0 && why)
		*why = d->why;
	return d->state > 0;
}
