/* One run, as evidence: everything the verdict, the bundle and the result
 * API judge or report, made once when the run ends and never changed.
 *
 *   image → disk → VM → recorder → frames → run record → verdict → bundle
 *
 * The VM layer makes it from a finished run (airlock_vm_get_record()),
 * `airlock verify` makes it again from a bundle's raw files, and a unit test
 * can make one from synthetic events: the verdict is a pure function of a
 * record and a policy, so every rule of it is proven without a VM.
 *
 * Public (in <airlock.h>): `airlock gate` reads a run through it. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

#include "../arch.h"
#include "../evidence/channel.h"
#include "../evidence/event.h"
#include "../net/flows.h"
#include "../sinkhole/sinkhole.h"

G_BEGIN_DECLS

typedef struct {
  AirlockArch arch;
  gboolean complete;             /* the channel (and the VM) ended whole */
  const char *incomplete_reason; /* why not, or NULL */
  const AirlockTrailer *trailer; /* the accepted trailer, or NULL */
  GPtrArray *guest_log;          /* char *: the guest's LOG frames in order, or NULL */
  AirlockEventLog *log;          /* the decoded events (a reference is taken), or NULL */
  GPtrArray *events;             /* AirlockEvent *, used when @log is NULL (tests);
                                  * a reference is taken */
  GBytes *pcap;                  /* the NIC's capture, or NULL */
  const char *pcap_error;        /* why there is none */
  /* The sinkhole's record file (sinkhole.h), or NULL.  When a sinkhole
   * served the run but its records are lost, NULL with @sinkhole_error
   * set; a run no sinkhole served (no NIC, a remote hypervisor, a bundle
   * made before the sinkhole) has neither. */
  GBytes *sinkhole_records;
  const char *sinkhole_error;
  guint32 timeout_ms;            /* the run's time limit (0: not known); with clock_warp the
                                  * host's limit of wall time */
  gboolean clock_warp;           /* the guest's clock was warped (QEMU -icount, sleep=off) */
  /* How long the workload was watched is not derived (a bundle made before
   * verdicts said it: `airlock verify` judges it as it was judged). */
  gboolean span_unknown;
  guint32 guest_time_ms;         /* with clock_warp: the guest's limit of guest time */

  /* What a report or a bundle shows besides what is judged (all optional). */
  AirlockChannel *channel;       /* the evidence channel (a reference is taken): its frames'
                                  * receipt times give the wall time the workload was watched */
  GBytes *stdout_bytes, *stderr_bytes;  /* the workload's output as received */
  gboolean output_truncated;
  GBytes *console;               /* the guest's console */
  const char *accel;             /* "tcg", "kvm" */
  const char *uri;               /* the libvirt connection */
  const char *domain_name;
  const char *qemu_version, *libvirt_version;
  guint heartbeat_ms, heartbeat_tolerance_ms;
} AirlockRunRecordInput;

typedef struct _AirlockRunRecord {
  AirlockArch arch;
  gboolean complete;
  char *incomplete_reason;       /* NULL when complete */
  gboolean has_trailer;
  AirlockTrailer trailer;        /* its strings are not kept: counts, exit status, end reason */
  GPtrArray *guest_log;          /* char *, never NULL */
  GPtrArray *events;             /* AirlockEvent *, seq order, never NULL */
  guint32 timeout_ms;
  gboolean clock_warp;
  guint32 guest_time_ms;

  /* Derived from the events: the last of each kind per phase, or NULL. */
  gboolean controls_ran;                 /* a WORKLOAD_START of the controls phase */
  const AirlockEvent *controls_exec;     /* WORKLOAD_EXEC of the controls phase */
  const AirlockEvent *workload_start;    /* WORKLOAD_START of the workload phase */
  const AirlockEvent *workload_exec;     /* WORKLOAD_EXEC of the workload phase */
  const AirlockEvent *workload_exit;     /* WORKLOAD_EXIT of the workload phase */
  /* How long the workload was watched, from its start event to its exit
   * event: in guest time (their CLOCK_BOOTTIME stamps) and in wall time
   * (the host's receipt of their frames, with a channel); -1 when not
   * known. */
  gint64 observed_guest_ms;
  gint64 observed_wall_ms;

  /* The capture, analysed against the guest's NIC, or NULL with a reason. */
  AirlockCapture *capture;
  char *capture_error;
  GBytes *pcap;                  /* as captured, or NULL */
  char *pcap_error;              /* why there is none (NULL with one) */

  /* The sinkhole's records as written, and read, or NULL with a reason
   * (sinkhole_error: none was served, or the file did not read). */
  GBytes *sinkhole_records;
  AirlockSinkholeLog *sinkhole;
  char *sinkhole_error;
  gboolean sinkhole_served;      /* a sinkhole served the run (records or an error came) */

  /* Reported, not judged (NULL / 0 when the maker had none). */
  AirlockChannel *channel;
  GBytes *stdout_bytes, *stderr_bytes, *console;   /* never NULL (empty) */
  gboolean output_truncated;
  char *accel, *uri, *domain_name, *qemu_version, *libvirt_version;
  guint heartbeat_ms, heartbeat_tolerance_ms;

  /*< private >*/
  gint ref_count;
  AirlockEventLog *log;
} AirlockRunRecord;

/* Never NULL: a capture that does not analyse is kept as capture_error (the
 * verdict then says why there is none).  Transfer full; release with
 * airlock_run_record_unref(). */
AIRLOCK_PUBLIC AirlockRunRecord *airlock_run_record_new (const AirlockRunRecordInput *input);
AIRLOCK_PUBLIC AirlockRunRecord *airlock_run_record_ref (AirlockRunRecord *record);
AIRLOCK_PUBLIC void airlock_run_record_unref (AirlockRunRecord *record);

/* The guest's last LOG message (a trusted program's last word: die()'s
 * reason before an error trailer), or NULL. */
AIRLOCK_PUBLIC const char *airlock_run_record_last_log (const AirlockRunRecord *record);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockRunRecord, airlock_run_record_unref)

G_END_DECLS
