/* The bundle's text: what verify, show and replay print of a bundle's
 * strings.  The JSON helpers the bundle is written and read with are the
 * toolbox's (json-util-private.h), included here for the bundle's files. */
#pragma once

#include "json-util-private.h"

G_BEGIN_DECLS

/* @s as it is when it is already what airlock_evidence_escape_bytes()
 * makes of guest bytes (no control or disguising characters, valid
 * UTF-8) — every string the writer puts in a bundle is — and escaped
 * otherwise, so an edited bundle cannot move a terminal's cursor.  An
 * escaped string keeps its backslashes as they are: only a string that
 * needs escaping is escaped (again).  Transfer full; NULL for NULL. */
char *airlock_bundle_safe_text (const char *s);

G_END_DECLS
