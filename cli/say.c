/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The command's messages: text that others chose goes through the
 * library's filter; usage errors. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

/* The one filter for text from the kernel or the user: cgroup paths and
 * names, command names, arguments, and messages that embed them. Whoever
 * owns a subtree picks its names; they must not drive the terminal. The
 * library's CGK_TEXT_SAFE: each control character (C0, DEL, C1 such as
 * U+009B CSI) and each byte that is not part of valid UTF-8 (a lone 0x9b
 * is CSI to an 8-bit terminal) becomes '?'; the rest passes as is. */
void put_safe(FILE *out, const char *text)
{
	cgk_text_write(out, text, strlen(text), CGK_TEXT_SAFE);
}

/* A value of --raw output, escaped as util-linux does: blanks, a
 * backslash before an x, control characters and each byte of no valid
 * UTF-8 as \xHH, so that a line splits at single spaces. */
void put_raw(FILE *out, const char *text)
{
	cgk_text_write(out, text, strlen(text), CGK_TEXT_RAW);
}

/* Columns that text takes as put_safe() writes it: one a character (a
 * wide one, CJK or emoji, takes two on a terminal and shifts its line). */
size_t safe_width(const char *text)
{
	return cgk_text_width(text, strlen(text));
}

/* fprintf for messages that embed such text: the whole message goes through
 * put_safe(), a newline that ends fmt is kept. */
void vsay(FILE *out, const char *fmt, va_list ap)
{
	size_t n = strlen(fmt);
	bool nl = n && fmt[n - 1] == '\n';
	char *text;
	int len = vasprintf(&text, fmt, ap);

	if (len < 0)
		return;
	if (nl)
		text[len - 1] = '\0';
	put_safe(out, text);
	if (nl)
		fputc('\n', out);
	free(text);
}

void say(FILE *out, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsay(out, fmt, ap);
	va_end(ap);
}

void usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("cgkill: ", stderr);
	va_start(ap, fmt);
	vsay(stderr, fmt, ap);
	va_end(ap);
	fputs("\nTry 'cgkill --help' for more information.\n", stderr);
	exit(EXIT_USAGE);
}

int parse_signal(const char *text)
{
	int sig;

	if (cgk_signal_from_name(text, &sig) < 0)
		usage_error("unknown signal: %s", text);
	return sig;
}
