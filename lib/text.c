// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * The one filter for text that others choose: cgroup and process names,
 * paths, and messages that embed them. Whoever owns a subtree picks its
 * names (any bytes but '/' and NUL); they must not drive a terminal, split
 * a log line or break a JSON document. UTF-8 (RFC 3629) is decoded: a byte
 * that is not part of a valid sequence (stray continuation bytes, truncated
 * sequences, overlong forms, surrogates, code points above U+10FFFF) is
 * never copied, since a lone 0x9b is CSI to an 8-bit terminal and no JSON
 * parser accepts it. The command, the daemon and the report's JSON all
 * write through here.
 */
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Length of the valid UTF-8 sequence at s (1..4, n bytes left), 0 if
 * invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	size_t len = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
	unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;	/* overlong */
	unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;	/* surrogates, > U+10FFFF */

	if (len > n)
		return 0;
	if (len > 1 && (s[1] < lo || s[1] > hi))
		return 0;
	for (size_t i = 2; i < len; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return len;
}

/* Is the valid sequence of len bytes at s a control character: C0, DEL,
 * or C1 (U+0080..U+009F, U+009B CSI among them)? */
static bool is_control(const unsigned char *s, size_t len)
{
	return (len == 1 && (*s < 0x20 || *s == 0x7f)) || (len == 2 && *s == 0xc2 && s[1] < 0xa0);
}

/* Room for the longest piece one character becomes, RAW's \xHH for each
 * of 4 bytes, and a NUL. */
#define PIECE_MAX 17

/* The next character of s (n > 0 bytes left) in form, into piece (NUL
 * ended); returns the bytes of s it took. */
static size_t piece(const unsigned char *s, size_t n, enum cgk_text_form form, char *piece)
{
	size_t len = utf8_len(s, n), step = len ?: 1;
	bool control = len && is_control(s, len);

	switch (form) {
	case CGK_TEXT_JSON:
		if (!len)
			strcpy(piece, "\\ufffd");
		else if (*s == '"' || *s == '\\')
			snprintf(piece, PIECE_MAX, "\\%c", *s);
		else if (*s == '\n' || *s == '\r' || *s == '\t')
			snprintf(piece, PIECE_MAX, "\\%c", *s == '\n' ? 'n' : *s == '\r' ? 'r' : 't');
		else if (control)
			snprintf(piece, PIECE_MAX, "\\u%04x", len == 1 ? *s : s[1]);
		else
			break;
		return step;
	case CGK_TEXT_RAW:
		if (!len || control || *s == ' ' || (*s == '\\' && n > 1 && s[1] == 'x')) {
			for (size_t i = 0; i < step; i++)
				snprintf(piece + 4 * i, PIECE_MAX - 4 * i, "\\x%02x", s[i]);
			return step;
		}
		break;
	default:
		if (!len || control) {
			strcpy(piece, "?");
			return step;
		}
		break;
	}
	memcpy(piece, s, len);
	piece[len] = '\0';
	return len;
}

static bool form_ok(enum cgk_text_form form)
{
	return form == CGK_TEXT_SAFE || form == CGK_TEXT_JSON || form == CGK_TEXT_RAW;
}

CGK_EXPORT int cgk_text_write(FILE *out, const char *text, size_t len, enum cgk_text_form form)
{
	const unsigned char *s = (const unsigned char *)text, *end = s + len;
	bool json = form == CGK_TEXT_JSON;
	char buf[256];
	size_t n = 0;

	if (!out || !form_ok(form) || (!text && len))
		return -EINVAL;
	if (json)
		buf[n++] = '"';
	/* in chunks: stderr is unbuffered */
	while (s < end) {
		s += piece(s, (size_t)(end - s), form, buf + n);
		n += strlen(buf + n);
		if (n > sizeof(buf) - PIECE_MAX - 2) {
			fwrite(buf, 1, n, out);
			n = 0;
		}
	}
	if (json)
		buf[n++] = '"';
	if (n)
		fwrite(buf, 1, n, out);
	return ferror(out) ? -EIO : 0;
}

/* Whole pieces into a buffer, counting what did not fit. */
struct sink {
	char *buf;
	size_t room, used, total;
	bool cut;
};

static void sink_put(struct sink *k, const char *p)
{
	size_t n = strlen(p);

	if (!k->cut && k->used + n <= k->room) {
		memcpy(k->buf + k->used, p, n);
		k->used += n;
	} else {
		k->cut = true;
	}
	k->total += n;
}

CGK_EXPORT size_t cgk_text_format(char *buf, size_t size, const char *text, size_t len,
				  enum cgk_text_form form)
{
	const unsigned char *s = (const unsigned char *)text, *end = s + (text ? len : 0);
	bool json = form == CGK_TEXT_JSON;
	/* JSON keeps room for its closing quote: a cut string still ends */
	struct sink k = { .buf = buf, .room = size > 1u + json ? size - 1 - json : 0 };
	char p[PIECE_MAX];

	if (!buf)
		size = 0, k.room = 0;
	if (!form_ok(form)) {
		if (size)
			*buf = '\0';
		return 0;
	}
	if (json)
		sink_put(&k, "\"");
	while (s < end) {
		s += piece(s, (size_t)(end - s), form, p);
		sink_put(&k, p);
	}
	if (json) {
		k.total++;
		if (size >= 3)
			buf[k.used++] = '"';
	}
	if (size)
		buf[k.used] = '\0';
	return k.total;
}

CGK_EXPORT size_t cgk_text_width(const char *text, size_t len)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t w = 0;

	for (size_t i = 0; text && i < len; w++)
		i += utf8_len(s + i, len - i) ?: 1;
	return w;
}
