/* What airlock replay's two files share (cmd-replay.c runs the case again,
 * replay-compare.c compares the runs). */
#pragma once

#include "harness.h"

#include <json-glib/json-glib.h>

/* One bundle as recorded: its manifest.json and the objects in it. */
typedef struct {
  char *dir;
  JsonNode *root;          /* manifest.json */
  JsonObject *m, *kase, *inputs, *image, *run;
  AirlockArch arch;
} Recorded;

/* @o's boolean member @name, @fallback when it is absent or not a boolean
 * (or @o is NULL). */
gboolean replay_bool_or (JsonObject *o, const char *name, gboolean fallback);

/* Appends to @diffs one line per difference between the recorded run @r
 * and the replay's @result: "- N x KEY" / "+ N x KEY" for attempts and
 * network records only in one of them, one line per control or verdict
 * that differs (or why the recorded verdict could not be read).
 * *@ret_compared_network says whether the recorded run had the sinkhole's
 * records to compare.  FALSE with @error, and nothing added, when the
 * recorded attempts (events.jsonl) cannot be read. */
gboolean replay_compare (const Recorded *r, AirlockResult *result, GPtrArray *diffs,
                         gboolean *ret_compared_network, GError **error);
