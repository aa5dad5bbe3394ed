/* The three answers a run can give.  Its own header so that the case API
 * (which reports a verdict) and the verdict (which computes one) need not
 * include each other. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_VERDICT_PASS,
  AIRLOCK_VERDICT_FAIL,
  AIRLOCK_VERDICT_INCONCLUSIVE,
} AirlockVerdictKind;

/* "pass", "fail", "inconclusive" (static). */
AIRLOCK_PUBLIC const char *airlock_verdict_kind_to_string (AirlockVerdictKind kind);

G_END_DECLS
