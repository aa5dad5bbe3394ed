/* Image strings in messages.
 *
 * Media types, tags, platform fields, digests as written, archive member
 * names, the User string: the image chooses them, and the airlock command
 * prints our messages on a terminal or into a CI log, where an ESC
 * sequence could erase or rewrite a line ("fail" shown as "pass") and a
 * newline could forge one.  So every such string goes through
 * airlock_image_printable() before it reaches a message or a listing; what
 * the user typed (the reference, its tag) and what we built from checked
 * values (a digest after parse_digest()) are shown as they are.
 *
 * The escaping is g_strescape()'s, as layer.c always did for entry paths,
 * rather than airlock_evidence_escape_bytes(): the intake is compiled on
 * its own into the fuzz harnesses (tests/fuzz/meson.build), without
 * lib/evidence, and needs no more than a printable rendering. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* Bytes of one image string a message shows: a media type or a tag is far
 * shorter, and a 4 MiB one must not make a 4 MiB message. */
#define AIRLOCK_IMAGE_PRINTABLE_MAX 200
/* Bytes of a list of them (the tags of an index, its platforms). */
#define AIRLOCK_IMAGE_PRINTABLE_LIST_MAX 1000

/* @s as a message may show it: its first AIRLOCK_IMAGE_PRINTABLE_MAX bytes
 * through g_strescape() (\n, \t, \", \\ and the other C escapes; every
 * other byte below 0x20 or from 0x7f as octal \NNN), so printable ASCII
 * with no control character, newline or invalid UTF-8; when @s is longer,
 * "… (N bytes)" follows.  The ellipsis is the only non-ASCII character the
 * result can hold, so an image cannot forge the mark.  "(none)" for NULL.
 * Transfer full. */
char *airlock_image_printable (const char *s);

/* Cuts @list, made of airlock_image_printable() strings and our own text,
 * to AIRLOCK_IMAGE_PRINTABLE_LIST_MAX bytes (never inside a UTF-8
 * character) and ends it with "…" when it was longer. */
void airlock_image_printable_list_bound (GString *list);

G_END_DECLS
