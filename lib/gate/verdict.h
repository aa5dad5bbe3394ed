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
#include "case/case.h"
#include "evidence/event.h"
#include "net/flows.h"
#include "policy/policy.h"

G_BEGIN_DECLS


typedef struct {
  const char *name;        /* "dns-udp" … (guest/probe-controls.h) */
  char *key;               /* "inet/dgram/udp 192.0.2.53:53" */
  gboolean by_supervisor;  /* a record of the controls phase names it */
  gboolean in_capture;     /* the capture holds its SYN / datagram */
} AirlockControlResult;

/* How the verdict weighed one workload record (egress or denied). */
typedef struct {
  guint64 seq;             /* the record's frame */
  gboolean egress;         /* an inet destination off the guest */
  gboolean admitted;       /* egress the policy admits */
  gboolean denied;         /* an escape the supervisor denied */
} AirlockVerdictAttempt;

typedef struct {
  AirlockVerdictKind kind;
  GPtrArray *reasons;      /* char *, one sentence each, in order found */
  GPtrArray *controls;     /* AirlockControlResult *, in probe order */
  guint n_controls_ok;
  guint n_attempts;        /* egress attempts of the workload (admitted or not) */
  guint n_admitted;
  guint n_denied;          /* escapes denied */
  guint n_unattributed;    /* capture flows no record explains */
  GArray *judged;          /* AirlockVerdictAttempt, in record order */
  GPtrArray *unattributed; /* char *: keys of the capture flows no record explains */
} AirlockVerdict;

/* The judgment of the record with frame @seq, or NULL when it was neither
 * egress nor a denial. */
const AirlockVerdictAttempt *airlock_verdict_lookup (const AirlockVerdict *verdict, guint64 seq);

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
/* The verdict over a run's decoded @events (or NULL), its pcap (or NULL,
 * then @pcap_error says why there is none), whether its evidence is
 * complete (else @incomplete_reason), under @policy: the capture is
 * analysed against the guest's NIC and the controls count as run when
 * their phase started.  With @ret_capture, the analysed capture is handed
 * over (NULL when there is none).  Never NULL.  `airlock verify` calls it
 * on the bundle's files, a run on its VM. */
AirlockVerdict *airlock_verdict_judge (GPtrArray *events, GBytes *pcap, const char *pcap_error,
                                       gboolean complete, const char *incomplete_reason,
                                       const AirlockPolicy *policy, AirlockCapture **ret_capture);
/* The same for a finished run (airlock_vm_run() returned). */
AirlockVerdict *airlock_verdict_judge_run (AirlockVm *vm, const AirlockPolicy *policy,
                                           AirlockCapture **ret_capture);
void airlock_verdict_free (AirlockVerdict *verdict);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVerdict, airlock_verdict_free)

G_END_DECLS
