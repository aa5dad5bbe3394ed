/* The verdict of one run: a pure function of its run record (the
 * supervisor's records, the trailer, the host-side capture, the sinkhole's
 * records when it served the run) and the policy.
 *
 *   inconclusive  the evidence is not whole (the channel is not complete,
 *                 there is no capture; the sinkhole's records did not read,
 *                 lack the process's final line or dropped records; a
 *                 datagram the supervisor saw sent and the capture saw
 *                 leave is not in them), or it does not prove the image ran
 *                 and was watched: the run ended by an error of a trusted
 *                 guest program or for a reason it does not name, the
 *                 workload never started, its entrypoint's execve failed or
 *                 was never seen to succeed, the controls did not run
 *   fail          a negative control is missing from the records or from
 *                 the capture (the detector was blind); the workload made
 *                 an egress attempt the policy does not admit — under the
 *                 name the sinkhole handed its address out for and under
 *                 every TLS SNI and HTTP Host the connection sent; a call
 *                 was denied as an escape; a flow in the capture or in the
 *                 sinkhole's records matches no record (something bypassed
 *                 the supervisor); a connection the supervisor saw
 *                 established and the capture saw leave is not in the
 *                 sinkhole's records (what it sent went unseen host-side)
 *   pass          none of these; a reason may still be a finding that
 *                 changes nothing ("noted, not judged: …": an SNI or Host
 *                 other than the address's name, which the policy admits)
 *
 * Pure: it reads decoded events, flows and a policy, and does no I/O. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"
#include "../evidence/event.h"
#include "verdict-kind.h"
#include "../net/flows.h"
#include "../policy/policy.h"
#include "../record/run-record.h"

G_BEGIN_DECLS


typedef struct {
  const char *name;        /* "dns-udp" … (guest/probe-controls.h) */
  char *key;               /* "inet/dgram/udp 192.0.2.53:53" */
  gboolean by_supervisor;  /* a record of the controls phase names it */
  gboolean in_capture;     /* the capture holds its SYN / datagram */
  gboolean sinkhole_judged; /* a datagram control, the sinkhole's records whole */
  gboolean by_sinkhole;    /* … and it took the control in (a record of its destination) */
} AirlockControlResult;

/* How the verdict weighed one workload record (egress or denied). */
typedef struct {
  guint64 seq;             /* the record's frame */
  gboolean egress;         /* an inet destination off the guest */
  gboolean admitted;       /* egress the policy admits */
  gboolean denied;         /* an escape the supervisor denied */
} AirlockVerdictAttempt;

typedef struct _AirlockVerdict {
  AirlockVerdictKind kind;
  GPtrArray *reasons;      /* char *, one sentence each, in order found */
  GPtrArray *controls;     /* AirlockControlResult *, in probe order */
  guint n_controls_ok;
  guint n_attempts;        /* egress attempts of the workload (admitted or not) */
  guint n_admitted;
  guint n_denied;          /* escapes denied */
  guint n_unattributed;    /* flows (the capture's, the sinkhole's) no record explains */
  GArray *judged;          /* AirlockVerdictAttempt, in record order */
  /* char *: keys of the flows no record explains, the capture's first,
   * then those only the sinkhole saw */
  GPtrArray *unattributed;
  /* The run's time limit ended it (of guest time, or under a warped clock
   * the host's of wall time): what ran after that was not observed. */
  gboolean ended_by_time_limit;
  /* The guest's clock was warped, and how long the workload was watched in
   * guest and in wall time (the record's; -1: not known). */
  gboolean clock_warp;
  gint64 observed_guest_ms;
  gint64 observed_wall_ms;
  /* How long the workload was observed and how it ended, for people:
   * "observed 6 h of guest time in 41 s; ended by the guest-time limit
   * (6 h): …", "observed until the workload ended (exited 0), 60 min of
   * guest time in 9.2 s"; NULL when it never started. */
  char *observation;
} AirlockVerdict;

/* The judgment of the record with frame @seq, or NULL when it was neither
 * egress nor a denial. */
AIRLOCK_PUBLIC const AirlockVerdictAttempt *airlock_verdict_lookup (const AirlockVerdict *verdict, guint64 seq);

/* The verdict over @record under @policy (NULL: nothing admitted).  Pure:
 * no I/O, the same record and policy always give the same verdict.  Never
 * NULL. */
AIRLOCK_PUBLIC AirlockVerdict *airlock_verdict_compute (const AirlockRunRecord *record,
                                                        const AirlockPolicy *policy);
AIRLOCK_PUBLIC void airlock_verdict_free (AirlockVerdict *verdict);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVerdict, airlock_verdict_free)

G_END_DECLS
