/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Reading the JSON documents of cgkill -j and cgk_report_json() with
 * Python's json module, strictly: UTF-8, one document, no duplicate keys.
 *
 *	json_is(&c, "d['targets'][0]['backend']", "freeze");
 */
#ifndef CGK_TEST_JSON_H
#define CGK_TEST_JSON_H

#include <stdbool.h>
#include <stddef.h>

#include "cmd.h"

bool have_python(void);
/* python3 -c script, with a path to a file holding text as argv[1] and arg
 * (if not NULL) as argv[2]: what it printed (malloc'ed), "INVALID: why" if
 * it failed, or NULL when python3 is missing. */
char *json_python(const char *text, const char *script, const char *arg);
/* Evaluate a Python expression over the document d parsed from text: the
 * value (a str as it is, anything else as JSON), or "INVALID: why", or NULL
 * when python3 is missing. Malloc'ed. */
char *json_eval(const char *text, const char *expr);
/* The same into buf: "" if there is no such value. */
const char *json_str(const char *text, const char *expr, char *buf, size_t size);
/* The same as a number: true 1, false 0, null (or no number) -1. */
long long json_num(const char *text, const char *expr);
/* Is text one valid JSON document? (false also when python3 is missing) */
bool json_valid(const char *text);
/* One test point: an expression over the command's JSON stdout against
 * want (a skip without python3). */
bool json_is(const struct cmd *c, const char *expr, const char *want);

#endif
