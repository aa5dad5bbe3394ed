/* One kind of problem for a bundle's verification and a set's
 * (problem-private.h). */
#include "config.h"

#include "bundle/problem-private.h"
#include "evidence/channel.h"

#include <string.h>

void
airlock_bundle_problem_addv (GPtrArray *problems, const char *file, const char *fmt, va_list ap)
{
  AirlockBundleProblem *p = g_new0 (AirlockBundleProblem, 1);
  g_autofree char *message = g_strdup_vprintf (fmt, ap);

  p->file = file ? airlock_evidence_escape_bytes ((const guint8 *) file, strlen (file)) : NULL;
  p->message = airlock_evidence_escape_bytes ((const guint8 *) message, strlen (message));
  g_ptr_array_add (problems, p);
}

void
airlock_bundle_problem_free (gpointer problem)
{
  AirlockBundleProblem *p = problem;

  g_free (p->file);
  g_free (p->message);
  g_free (p);
}
