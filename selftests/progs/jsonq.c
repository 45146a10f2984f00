// SPDX-License-Identifier: GPL-2.0
/*
 * jsonq [-t] FILE PATH...: a strict JSON parser and a tiny query tool for
 * the selftests (the guest has no jq). Prints the value at each PATH on its
 * own line: strings unquoted, numbers as written, objects and arrays as
 * "{...}"/"[...]"; with -t the type instead (object, array, string, number,
 * bool, null). "#" as the last segment prints an array's or object's length.
 *
 * PATH: segments separated by '.'; a segment is a key, [N] an array index,
 * or [KEY=VALUE] the first array element whose KEY equals VALUE.
 * "." alone is the whole document (validates it).
 *
 * Exit: 0 found, 1 a path not found, 2 invalid JSON or usage.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum type { T_NULL, T_BOOL, T_NUM, T_STR, T_ARR, T_OBJ };

struct val {
	enum type t;
	char *s;		/* T_STR: text; T_NUM/T_BOOL: as written */
	char *key;		/* as a member of an object */
	struct val *kids;	/* T_ARR/T_OBJ: first child */
	struct val *next;
	int n;
};

static const char *src, *p;

static void die(const char *why)
{
	fprintf(stderr, "jsonq: invalid JSON at byte %ld: %s\n", (long)(p - src), why);
	exit(2);
}

static void ws(void)
{
	while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')
		p++;
}

static char *str(void)
{
	size_t cap = 16, n = 0;
	char *o = malloc(cap);

	if (*p++ != '"')
		die("expected a string");
	for (;;) {
		char c = *p++;

		if (!c)
			die("unterminated string");
		if ((unsigned char)c < 0x20)
			die("control character in a string");
		if (c == '"')
			break;
		if (c == '\\') {
			c = *p++;
			switch (c) {
			case '"': case '\\': case '/': break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u':
				for (int i = 0; i < 4; i++)
					if (!isxdigit((unsigned char)p[i]))
						die("bad \\u escape");
				p += 4;
				c = '?';
				break;
			default: die("bad escape");
			}
		}
		if (n + 2 > cap)
			o = realloc(o, cap *= 2);
		o[n++] = c;
	}
	o[n] = 0;
	return o;
}

static struct val *value(void);

static struct val *value(void)
{
	struct val *v = calloc(1, sizeof(*v)), **tail;
	const char *b;

	ws();
	switch (*p) {
	case '{':
	case '[': {
		char close = *p == '{' ? '}' : ']';

		v->t = *p == '{' ? T_OBJ : T_ARR;
		p++;
		ws();
		tail = &v->kids;
		if (*p == close) {
			p++;
			return v;
		}
		for (;;) {
			char *k = NULL;
			struct val *kid;

			ws();
			if (v->t == T_OBJ) {
				k = str();
				ws();
				if (*p++ != ':')
					die("expected ':'");
			}
			kid = value();
			kid->key = k;
			*tail = kid;
			tail = &kid->next;
			v->n++;
			ws();
			if (*p == ',') {
				p++;
				continue;
			}
			if (*p++ != close)
				die("expected ',' or a closing bracket");
			return v;
		}
	}
	case '"':
		v->t = T_STR;
		v->s = str();
		return v;
	case 't': case 'f': case 'n':
		if (!strncmp(p, "true", 4) || !strncmp(p, "null", 4)) {
			v->t = *p == 'n' ? T_NULL : T_BOOL;
			v->s = strndup(p, 4);
			p += 4;
		} else if (!strncmp(p, "false", 5)) {
			v->t = T_BOOL;
			v->s = strndup(p, 5);
			p += 5;
		} else {
			die("bad literal");
		}
		return v;
	default:
		b = p;
		if (*p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			die("unexpected character");
		if (*p == '0' && isdigit((unsigned char)p[1]))
			die("leading zero");
		while (isdigit((unsigned char)*p))
			p++;
		if (*p == '.') {
			p++;
			if (!isdigit((unsigned char)*p))
				die("bad fraction");
			while (isdigit((unsigned char)*p))
				p++;
		}
		if (*p == 'e' || *p == 'E') {
			p++;
			if (*p == '+' || *p == '-')
				p++;
			if (!isdigit((unsigned char)*p))
				die("bad exponent");
			while (isdigit((unsigned char)*p))
				p++;
		}
		v->t = T_NUM;
		v->s = strndup(b, p - b);
		return v;
	}
}

static const char *scalar(const struct val *v)
{
	switch (v->t) {
	case T_OBJ: return "{...}";
	case T_ARR: return "[...]";
	case T_NULL: return "null";
	default: return v->s;
	}
}

static struct val *walk(struct val *v, char *path)
{
	char *seg, *save = NULL;

	if (!strcmp(path, "."))
		return v;
	for (seg = strtok_r(path, ".", &save); seg && v; seg = strtok_r(NULL, ".", &save)) {
		struct val *k;

		if (seg[0] == '[') {
			char *eq = strchr(seg, '='), *end = strchr(seg, ']');

			if (v->t != T_ARR || !end)
				return NULL;
			*end = 0;
			if (!eq) {
				int i = atoi(seg + 1);

				for (k = v->kids; k && i; k = k->next)
					i--;
			} else {
				*eq = 0;
				for (k = v->kids; k; k = k->next) {
					struct val *m;

					if (k->t != T_OBJ)
						continue;
					for (m = k->kids; m; m = m->next)
						if (!strcmp(m->key, seg + 1) && m->t != T_OBJ &&
						    m->t != T_ARR && !strcmp(scalar(m), eq + 1))
							break;
					if (m)
						break;
				}
			}
			v = k;
			continue;
		}
		if (!strcmp(seg, "#")) {
			static struct val len;
			static char buf[32];

			if (v->t != T_ARR && v->t != T_OBJ)
				return NULL;
			snprintf(buf, sizeof(buf), "%d", v->n);
			len.t = T_NUM;
			len.s = buf;
			return &len;
		}
		if (v->t != T_OBJ)
			return NULL;
		for (k = v->kids; k; k = k->next)
			if (!strcmp(k->key, seg))
				break;
		v = k;
	}
	return v;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "null", "bool", "number", "string", "array", "object" };
	int i = 1, types = 0, rc = 0;
	size_t cap = 1 << 16, n = 0, r;
	char *buf = malloc(cap);
	struct val *root;
	FILE *f;

	if (i < argc && !strcmp(argv[i], "-t")) {
		types = 1;
		i++;
	}
	if (argc - i < 2) {
		fprintf(stderr, "usage: jsonq [-t] FILE PATH...\n");
		return 2;
	}
	f = strcmp(argv[i], "-") ? fopen(argv[i], "r") : stdin;
	if (!f) {
		perror(argv[i]);
		return 2;
	}
	while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	buf[n] = 0;
	src = p = buf;
	root = value();
	ws();
	if (*p)
		die("trailing characters");
	for (i++; i < argc; i++) {
		char *path = strdup(argv[i]);
		struct val *v = walk(root, path);

		if (!v) {
			fprintf(stderr, "jsonq: %s: not found\n", argv[i]);
			rc = 1;
			continue;
		}
		puts(types ? names[v->t] : scalar(v));
	}
	return rc;
}
