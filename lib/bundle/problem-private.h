/* The problems `airlock verify` finds (AirlockBundleProblem, bundle.h), of
 * one bundle (bundle-verify.c) or of a gate's set (bundle-set.c): made
 * and freed in one place, so both escape what they quote the same way. */
#pragma once

#include "bundle/bundle.h"

#include <stdarg.h>

G_BEGIN_DECLS

/* Adds a problem of @file (NULL: of the whole) to @problems, its message
 * made from @fmt.  A problem quotes what the bundle or the set holds (a
 * file's name, INCOMPLETE's line, a manifest's or set.json's value):
 * whoever made them chose those bytes, and they reach a terminal or a CI
 * page.  The file name and the message are escaped here, once
 * (airlock_evidence_escape_bytes()). */
void airlock_bundle_problem_addv (GPtrArray *problems, const char *file, const char *fmt,
                                  va_list ap) G_GNUC_PRINTF (3, 0);

/* Frees one AirlockBundleProblem: the free function of a problems array. */
void airlock_bundle_problem_free (gpointer problem);

G_END_DECLS
