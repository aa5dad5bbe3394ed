/* The verdict of one run: the supervisor's records, the host-side capture,
 * the negative controls and the policy, weighed together.
 *
 *   inconclusive  the evidence is not whole (the channel is not complete,
 *                 there is no capture)
 *   fail          a negative control is missing from the records or from
 *                 the capture (the detector was blind); the workload made
 *                 an egress attempt the policy does not admit; a call was
 *                 denied as an escape; a flow in the capture matches no
 *                 record (something bypassed the supervisor)
 *   pass          none of these
 *
 * Pure: it reads decoded events, flows and a policy, and does no I/O. */
#pragma once

#include "airlock-macros.h"
#include "evidence/event.h"
#include "net/flows.h"
#include "policy/policy.h"

G_BEGIN_DECLS

typedef enum {
  AIRLOCK_VERDICT_PASS,
  AIRLOCK_VERDICT_FAIL,
  AIRLOCK_VERDICT_INCONCLUSIVE,
} AirlockVerdictKind;

typedef struct {
  const char *name;        /* "dns-udp" … (guest/probe-controls.h) */
  char *key;               /* "inet/dgram/udp 192.0.2.53:53" */
  gboolean by_supervisor;  /* a record of the controls phase names it */
  gboolean in_capture;     /* the capture holds its SYN / datagram */
} AirlockControlResult;

typedef struct {
  AirlockVerdictKind kind;
  GPtrArray *reasons;      /* char *, one sentence each, in order found */
  GPtrArray *controls;     /* AirlockControlResult *, in probe order */
  guint n_controls_ok;
  guint n_attempts;        /* egress attempts of the workload (admitted or not) */
  guint n_admitted;
  guint n_denied;          /* escapes denied */
  guint n_unattributed;    /* capture flows no record explains */
} AirlockVerdict;

typedef struct {
  gboolean complete;       /* the evidence channel ended with a valid trailer */
  const char *incomplete_reason;
  GPtrArray *events;       /* AirlockEvent * (the run's event log), or NULL */
  AirlockCapture *capture; /* the NIC's flows, or NULL when there was no capture */
  const char *capture_error; /* why there is none */
  gboolean controls_ran;   /* the run had the negative controls */
  const AirlockPolicy *policy;
} AirlockVerdictInput;

AirlockVerdict *airlock_verdict_compute (const AirlockVerdictInput *input);

typedef struct _AirlockVm AirlockVm;
/* The verdict of a finished run (airlock_vm_run() returned): its events,
 * its capture analysed against the guest's NIC, whether its negative
 * controls ran, under @policy.  Never NULL. */
AirlockVerdict *airlock_verdict_judge_run (AirlockVm *vm, const AirlockPolicy *policy);
void airlock_verdict_free (AirlockVerdict *verdict);
const char *airlock_verdict_kind_to_string (AirlockVerdictKind kind);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVerdict, airlock_verdict_free)

G_END_DECLS
