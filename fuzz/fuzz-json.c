// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * libFuzzer target: cgk_report_json on reports built from fuzz bytes (any
 * bytes in paths, comms, cgroups and messages, an unterminated comm, out of
 * range enums, signals and errnos), with a strict JSON validator (RFC 8259,
 * UTF-8 included) run on the output.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct input {
	const uint8_t *p;
	size_t n;
};

static uint8_t take_u8(struct input *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static uint32_t take_u32(struct input *in)
{
	uint32_t v = 0;

	for (int i = 0; i < 4; i++)
		v = v << 8 | take_u8(in);
	return v;
}

/* A length byte, then that many bytes into dst (up to size, no NUL added
 * when it fills dst: the writer must bound its reads itself). */
static void take_bytes(struct input *in, char *dst, size_t size)
{
	size_t len = take_u8(in);

	if (len == 255)
		len = size;	/* fill it all: no terminator */
	if (len > size)
		len = size;
	if (len > in->n)
		len = in->n;
	memcpy(dst, in->p, len);
	in->p += len;
	in->n -= len;
}

/* A length byte, then that many bytes as a C string (which ends at a NUL
 * among them). */
static char *take_string(struct input *in)
{
	char buf[256] = "";

	take_bytes(in, buf, sizeof(buf) - 1);
	return strdup(buf);
}

static void take_procs(struct input *in, struct cgk_process_list *l)
{
	size_t n = take_u8(in) % 6;

	for (size_t i = 0; i < n; i++) {
		pid_t pid = (pid_t)take_u32(in);
		char state = (char)take_u8(in);
		char comm[16] = "";
		char *cgroup;
		struct cgk_process *p;

		take_bytes(in, comm, sizeof(comm));
		cgroup = take_string(in);
		if (cgroup && cgk_process_list_add(l, pid, cgroup, &p) == 0) {
			p->state = state;
			memcpy(p->comm, comm, sizeof(comm));
		}
		free(cgroup);
	}
}

/* ---- a strict JSON validator ---- */
struct json {
	const unsigned char *s, *end;
	int depth;
};

static void ws(struct json *j)
{
	while (j->s < j->end && (*j->s == ' ' || *j->s == '\t' || *j->s == '\n' || *j->s == '\r'))
		j->s++;
}

static bool lit(struct json *j, const char *word)
{
	size_t n = strlen(word);

	if ((size_t)(j->end - j->s) < n || memcmp(j->s, word, n) != 0)
		return false;
	j->s += n;
	return true;
}

static int hex4(struct json *j)
{
	int v = 0;

	if (j->end - j->s < 4)
		return -1;
	for (int i = 0; i < 4; i++) {
		unsigned char c = *j->s++;

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return -1;
	}
	return v;
}

static bool string(struct json *j)
{
	if (j->s >= j->end || *j->s++ != '"')
		return false;
	while (j->s < j->end) {
		unsigned char c = *j->s;

		if (c == '"') {
			j->s++;
			return true;
		}
		if (c < 0x20)
			return false;
		if (c == '\\') {
			j->s++;
			if (j->s >= j->end)
				return false;
			c = *j->s++;
			if (c == 'u') {
				int u = hex4(j);

				if (u < 0 || (u >= 0xdc00 && u <= 0xdfff))
					return false;
				if (u >= 0xd800 && u <= 0xdbff) {
					if (!lit(j, "\\u"))
						return false;
					u = hex4(j);
					if (u < 0xdc00 || u > 0xdfff)
						return false;
				}
			} else if (!strchr("\"\\/bfnrt", c) || c == '\0') {
				return false;
			}
			continue;
		}
		if (c < 0x80) {
			j->s++;
			continue;
		}
		/* UTF-8, RFC 3629 */
		size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 :
			     c >= 0xf0 && c <= 0xf4 ? 4 : 0;
		unsigned lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
		unsigned hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;

		if (!len || (size_t)(j->end - j->s) < len || j->s[1] < lo || j->s[1] > hi)
			return false;
		for (size_t i = 2; i < len; i++)
			if (j->s[i] < 0x80 || j->s[i] > 0xbf)
				return false;
		j->s += len;
	}
	return false;
}

static bool number(struct json *j)
{
	const unsigned char *start;

	if (j->s < j->end && *j->s == '-')
		j->s++;
	start = j->s;
	while (j->s < j->end && *j->s >= '0' && *j->s <= '9')
		j->s++;
	if (j->s == start || (*start == '0' && j->s - start > 1))
		return false;
	return true;	/* we write integers only */
}

static bool value(struct json *j);

static bool members(struct json *j, char close, bool keyed)
{
	j->s++;
	ws(j);
	if (j->s < j->end && *j->s == close) {
		j->s++;
		return true;
	}
	for (;;) {
		ws(j);
		if (keyed) {
			if (!string(j))
				return false;
			ws(j);
			if (!lit(j, ":"))
				return false;
		}
		if (!value(j))
			return false;
		ws(j);
		if (j->s >= j->end)
			return false;
		if (*j->s == close) {
			j->s++;
			return true;
		}
		if (*j->s++ != ',')
			return false;
	}
}

static bool value(struct json *j)
{
	bool good;

	ws(j);
	if (j->s >= j->end || ++j->depth > 16)
		return false;
	switch (*j->s) {
	case '{':
		good = members(j, '}', true);
		break;
	case '[':
		good = members(j, ']', false);
		break;
	case '"':
		good = string(j);
		break;
	case 't':
		good = lit(j, "true");
		break;
	case 'f':
		good = lit(j, "false");
		break;
	case 'n':
		good = lit(j, "null");
		break;
	default:
		good = number(j);
	}
	j->depth--;
	return good;
}

static size_t count(const char *hay, size_t n, const char *needle)
{
	size_t c = 0, k = strlen(needle);

	for (const char *s = hay; (s = memmem(s, n - (size_t)(s - hay), needle, k)); s += k)
		c++;
	return c;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input in = { data, size };
	struct cgk_report *reps[2] = { NULL, NULL };
	size_t nrep, len = 0, procs = 0;
	char *out = NULL;
	FILE *f;
	int ret;

	nrep = 1 + take_u8(&in) % 2;
	for (size_t k = 0; k < nrep; k++) {
		struct cgk_report *rep;
		char *path = take_string(&in);
		size_t n_signals;

		rep = reps[k] = cgk_report_new(path);
		free(path);
		if (!rep)
			goto done;
		rep->hierarchy = (int8_t)take_u8(&in);
		rep->fell_back_from = (enum cgk_backend)(int8_t)take_u8(&in);
		rep->fallback_errno = (int)take_u32(&in);
		rep->refused = (enum cgk_guard)(int8_t)take_u8(&in);
		n_signals = take_u8(&in) % 16;
		for (size_t i = 0; i < n_signals; i++)
			cgk_report_add_signal(rep, (int)take_u32(&in),
					      (enum cgk_backend)(int8_t)take_u8(&in));
		rep->backend = (enum cgk_backend)(int8_t)take_u8(&in);
		rep->cgroups = take_u32(&in);
		rep->signalled = take_u32(&in);
		rep->unreachable = take_u32(&in);
		rep->not_permitted = take_u32(&in);
		rep->waited = take_u8(&in) & 1;
		rep->emptied = take_u8(&in) & 1;
		rep->signal_ms = (uint64_t)take_u32(&in) << 32 | take_u32(&in);
		rep->empty_ms = (uint64_t)take_u32(&in) << 32 | take_u32(&in);
		rep->error = (int)take_u32(&in);
		rep->message = take_string(&in);
		take_procs(&in, &rep->lists[CGK_LIST_SURVIVORS]);
		take_procs(&in, &rep->lists[CGK_LIST_LISTED]);
		procs += rep->lists[CGK_LIST_SURVIVORS].n + rep->lists[CGK_LIST_LISTED].n;
	}

	f = open_memstream(&out, &len);
	if (!f)
		goto done;
	ret = cgk_report_json((const cgk_report *const *)reps, nrep, f);
	fclose(f);
	if (ret < 0 || !out)
		__builtin_trap();

	struct json j = { (const unsigned char *)out, (const unsigned char *)out + len, 0 };

	if (!value(&j))
		__builtin_trap();
	ws(&j);
	if (j.s != j.end)
		__builtin_trap();	/* one document, nothing after it */
	if (count(out, len, "\"pid\": ") != procs)
		__builtin_trap();	/* every process listed exactly once */
	if (count(out, len, "\"path\": ") != nrep)
		__builtin_trap();
done:
	free(out);
	for (size_t k = 0; k < 2; k++)
		cgk_report_free(reps[k]);
	return 0;
}
