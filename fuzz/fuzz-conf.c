// SPDX-License-Identifier: LGPL-2.1-or-later
/* libFuzzer target: cgkilld.conf, the daemon's own INI parser
 * (daemon/config.c, included: the parser is pure, the rest of the daemon
 * is not linked). Any input: errors counted and reported with a line
 * number within the input, never a crash or a leak; what is accepted is
 * complete and within bounds, and its settings as --check -v prints them
 * are read back without an error to the same settings. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../daemon/config.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* cfg as conf_print() writes it, malloc'ed. */
static char *printed(const struct config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *f = open_memstream(&text, len);

	if (!f)
		__builtin_trap();
	conf_print(f, cfg);
	fclose(f);
	return text;
}

/* The printed settings parse without an error and print the same. */
static void round_trip(const struct config *cfg)
{
	struct config again;
	size_t len, len2;
	char *text = printed(cfg, &len), *text2;

	conf_init(&again);
	conf_parse_text(&again, "printed", text, len, NULL, NULL);
	conf_finish(&again, NULL, NULL);
	text2 = printed(&again, &len2);
	if (again.errors || len != len2 || memcmp(text, text2, len))
		__builtin_trap();
	free(text);
	free(text2);
	conf_free(&again);
}

struct seen {
	unsigned lines, calls;
};

static void on_error(void *ud, int pri, const char *file, unsigned line, const char *msg)
{
	struct seen *s = ud;

	if (strcmp(file, "fuzz.conf") || !msg || !*msg || line < 1 || line > s->lines + 1 ||
	    (pri != LOG_PRI_ERR && pri != LOG_PRI_WARNING))
		__builtin_trap();
	s->calls += pri == LOG_PRI_ERR;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg;
	struct seen s = { .lines = 1 };

	for (size_t i = 0; i < size; i++)
		s.lines += data[i] == '\n';
	conf_init(&cfg);
	conf_parse_text(&cfg, "fuzz.conf", (const char *)data, size, on_error, &s);
	conf_finish(&cfg, NULL, NULL);
	if (s.calls > cfg.errors)
		__builtin_trap();
	if (!cfg.errors) {
		for (size_t i = 0; i < cfg.nrules; i++) {
			const struct rule *r = &cfg.rules[i];

			if (!r->name || !r->match || !r->ncomp || !r->triggers || r->nesc > CGKILLD_MAX_ESCALATIONS ||
			    !r->pids_max_events || !r->oom_kills || r->max_per_minute > STORM_SLOTS)
				__builtin_trap();
			for (size_t j = 0; j < r->ncomp; j++)
				if (!*r->comp[j] || strchr(r->comp[j], '/') || !strcmp(r->comp[j], ".."))
					__builtin_trap();
			if (!r->pressure_pct || r->pressure_pct > 100 || r->pressure_window_ms < PSI_WINDOW_MIN_MS ||
			    r->pressure_window_ms > PSI_WINDOW_MAX_MS || !r->exec_timeout_ms ||
			    ((r->triggers & TRIG_PSI) && r->pressure_duration_ms < r->pressure_window_ms) ||
			    (r->reap == 1 && !rule_sends_sigkill(r)))
				__builtin_trap();
			for (char **a = r->exec_pre; a && *a; a++)
				if (a == r->exec_pre && **a != '/')
					__builtin_trap();
			for (size_t j = 0; j < r->avoid.n; j++)
				if (r->avoid.v[j][0] == '/' || dotdot(r->avoid.v[j]))
					__builtin_trap();
		}
	}
	if (!cfg.errors)
		round_trip(&cfg);
	/* parsing twice into the same object only adds */
	conf_parse_text(&cfg, "fuzz.conf", (const char *)data, size, NULL, NULL);
	conf_free(&cfg);
	return 0;
}
