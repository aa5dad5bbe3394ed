/* The three answers a run can give, named (verdict-kind.h).  Beside its
 * type, low in the picture: the case API names a result's verdict and the
 * verdict names its own, and neither includes the other for it. */
#include "config.h"

#include "gate/verdict-kind.h"

const char *
airlock_verdict_kind_to_string (AirlockVerdictKind kind)
{
  switch (kind)
    {
    case AIRLOCK_VERDICT_PASS:
      return "pass";
    case AIRLOCK_VERDICT_FAIL:
      return "fail";
    case AIRLOCK_VERDICT_INCONCLUSIVE:
      return "inconclusive";
    }
  return "unknown";
}
