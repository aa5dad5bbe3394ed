/* One guest VM per run, through libvirt: define, boot, evidence handshake,
 * heartbeats, trailer, teardown — each failure ending the run with a reason.
 *
 * The connection is libvirt's embedded QEMU driver by default (no daemon;
 * qemu:///embed?root=<cache>/libvirt/slot-N), or any URI (qemu:///system,
 * qemu+ssh://…).  Console and evidence are read through libvirt streams. */
#pragma once

#include <gio/gio.h>

#include "../airlock-macros.h"
#include "../arch.h"
#include "../evidence/channel.h"
#include "../evidence/spec.h"
#include "../guestimg/guest-image.h"

G_BEGIN_DECLS

#define AIRLOCK_VM_ERROR (airlock_vm_error_quark ())
typedef enum {
  AIRLOCK_VM_ERROR_CONNECT,   /* the libvirt connection cannot be opened */
  AIRLOCK_VM_ERROR_EMULATOR,  /* no QEMU for the guest arch */
  AIRLOCK_VM_ERROR_KVM,       /* KVM was required and is not usable */
  AIRLOCK_VM_ERROR_START,     /* libvirt refused to create or start the domain */
  AIRLOCK_VM_ERROR_STREAM,    /* console or evidence stream could not be opened */
  AIRLOCK_VM_ERROR_FAILED,    /* anything else; the message says what */
} AirlockVmError;

AIRLOCK_PUBLIC GQuark airlock_vm_error_quark (void);

typedef enum {
  AIRLOCK_ACCEL_AUTO = 0, /* KVM when the arch matches and a probe boot works, else TCG */
  AIRLOCK_ACCEL_TCG,
  AIRLOCK_ACCEL_KVM,      /* KVM or a fast error; never a fallback */
} AirlockAccel;

/* Parses "auto", "tcg", "kvm".  FALSE for anything else. */
AIRLOCK_PUBLIC gboolean airlock_accel_from_string (const char *name, AirlockAccel *ret_accel);

/* What a record function is handed (AirlockVmOptions.record_func). */
typedef enum {
  AIRLOCK_VM_RECORD_EVIDENCE, /* the evidence channel, byte for byte as received */
  AIRLOCK_VM_RECORD_CONSOLE,  /* the serial console (up to the console cap) */
  AIRLOCK_VM_RECORD_STDIN,    /* bytes forwarded to the workload's stdin */
  AIRLOCK_VM_RECORD_STDOUT,   /* the workload's stdout, as received */
  AIRLOCK_VM_RECORD_STDERR,
} AirlockVmRecord;

/* One decoded supervisor record (lib/evidence/event.h, internal). */
typedef struct _AirlockEvent AirlockEvent;

/* The URI that names airlock's own embedded driver (in a slot under the
 * cache directory), where a URI is needed for it: in a list of
 * hypervisors (AirlockSessionOptions.uris, $AIRLOCK_CONNECT, several
 * `--connect`). */
#define AIRLOCK_URI_EMBEDDED "qemu:///embed"

typedef struct {
  const char *uri;              /* NULL or AIRLOCK_URI_EMBEDDED: the embedded driver;
                                 * NULL and $AIRLOCK_CONNECT set: that URI */
  const char *cache_dir;        /* NULL: airlock_default_cache_dir () */
  AirlockAccel accel;
  guint memory_mib;             /* 0: 512 */
  guint vcpus;                  /* 0: 1 */
  guint boot_timeout_ms;        /* domain start → hello; 0: 60000 */
  guint run_timeout_ms;         /* hello → trailer; 0: guest_run_ms + 60000, with a spec its
                                 * time limit (clock_warp: wall_timeout_ms) + 30000 */
  guint heartbeat_ms;           /* 0: 200 */
  guint heartbeat_tolerance_ms; /* no heartbeat for this long → inconclusive; 0: 5000 */
  guint guest_run_ms;           /* how long the guest heartbeats before its trailer; 0: 1000 */
  gboolean arm64_cpu_max;       /* arm64 under TCG: max,pauth-impdef=on instead of cortex-a57 */
  gboolean icount;              /* under TCG: deterministic instruction counting (-icount) */
  /* With a spec: the guest's clock runs ahead while the guest is idle
   * (QEMU -icount shift=2,sleep=off: when every vCPU waits, the clock jumps
   * to the next timer), so a workload that sleeps for hours first is seen
   * doing what it does next.  The spec's timeout_ms is then a limit of
   * guest time (AirlockRunSpec.warp is set from this); the host paces the
   * guest's heartbeats with ticks on the evidence channel and ends the
   * workload (AIRLOCK_HOST_STOP) @wall_timeout_ms after it started.  TCG
   * only: with AIRLOCK_ACCEL_AUTO the run takes TCG without probing KVM,
   * with AIRLOCK_ACCEL_KVM airlock_vm_new() fails (AIRLOCK_VM_ERROR_KVM).
   * Ignored without a spec (the boot check keeps its own timer). */
  gboolean clock_warp;
  guint wall_timeout_ms;        /* with clock_warp: workload start → STOP; 0: 30000 */
  const char *test_mode;        /* tests only: airlock.test=MODE for the guest init */
  /* What the guest supervisor runs (borrowed; encoded by airlock_vm_new(),
   * so it need not outlive that call).  NULL: the boot check (heartbeat for
   * guest_run_ms, then the trailer).  With a spec, the host hello carries
   * its length and the spec follows it, the chain is seeded with both, EVENT
   * frames are decoded into an AirlockEventLog (airlock_vm_get_events()),
   * and run_timeout_ms, when 0, becomes spec->timeout_ms plus a margin for
   * the guest to end the workload and send its trailer. */
  const AirlockRunSpec *spec;
  /* With a spec: the ext4 disk holding the workload's root (attached
   * read-only with serial spec->root_disk), or NULL. */
  const char *root_disk_path;
  /* With spec->stdio: bytes for the workload's stdin (borrowed; NULL or
   * empty: end of file at once).  Stdout and stderr are kept, up to 16 MiB
   * each (airlock_vm_get_stdout/stderr). */
  GBytes *stdin_data;
  /* With spec->stdio, instead of stdin_data: forward what this stream gives,
   * as it comes (a terminal, a pipe), then end of file (borrowed; must
   * outlive the run; a blocking read is cancelled when the run ends). */
  GInputStream *stdin_stream;
  /* With spec->stdio: called from a reader thread for every chunk of the
   * workload's stdout (stream 1) or stderr (2) as it arrives, besides
   * keeping it for get_stdout/get_stderr. */
  void (*output_func) (int stream, const guint8 *data, gsize len, gpointer user_data);
  gpointer output_data;
  /* With a spec the guest gets one NIC whose far end is airlock's sinkhole
   * network (docs/sinkhole.md): every name answered, every connection
   * accepted and recorded, every frame captured host-side
   * (airlock_vm_get_pcap); TRUE: no NIC at all. */
  gboolean no_network;
  /* What an admitted name answers: "NAME:PORT=FILE" (the file's bytes are
   * sent to a connection to the address handed out for NAME, on PORT), or
   * NULL (borrowed; copied by airlock_vm_new()). */
  const char *const *serve;
  /* Called with every chunk of each stream as it arrives, before it is
   * decoded or kept, from the stream's reader thread (one thread per kind,
   * so calls of one kind are in order): an evidence bundle writes them to
   * disk as they come, so a crash of this process keeps what arrived.  It
   * must not call back into the VM. */
  void (*record_func) (AirlockVmRecord what, const guint8 *data, gsize len, gpointer user_data);
  gpointer record_data;
  /* With a spec: called for every EVENT frame the channel accepts, once it
   * is decoded, in frame order: @event (owned by the VM's event log, valid
   * until the VM is freed) and, for a RESULT, @call, the syscall event it
   * completes, its outcome now known (else NULL).  From the evidence reader
   * thread with the VM's lock held: it must return quickly and must not
   * call into the VM.  It only watches: the evidence is what it is
   * (`airlock shell` prints each attempt as it happens). */
  void (*event_func) (const AirlockEvent *event, const AirlockEvent *call, gpointer user_data);
  gpointer event_data;
} AirlockVmOptions;

/* Wall-clock points of a run, in g_get_monotonic_time () microseconds;
 * 0 when the point was never reached. */
typedef struct {
  gint64 begin;        /* before the domain was created */
  gint64 created;      /* domain created (QEMU running, vCPUs paused) */
  gint64 started;      /* streams open, vCPUs resumed */
  gint64 first_console;/* first console byte: the kernel is running */
  gint64 hello;        /* hello accepted: the guest is ready */
  gint64 workload;     /* the workload phase's start event accepted */
  gint64 wall_stop;    /* clock_warp: the host's stop sent (its wall-time limit) */
  gint64 trailer;      /* trailer accepted */
  gint64 stopped;      /* domain gone, streams closed */
} AirlockVmTimings;

typedef struct _AirlockVm AirlockVm;
/* The decoded supervisor records (lib/evidence/event.h, internal). */
typedef struct _AirlockEventLog AirlockEventLog;

/* Opens the connection, resolves the accelerator (a KVM probe boot may run
 * here, cached per host boot) and removes domains and run files left behind
 * by crashed runs.  Returns NULL with @error set when the VM cannot be
 * prepared (including a run spec that does not encode:
 * AIRLOCK_RUN_SPEC_ERROR).  @image is borrowed and must outlive the VM. */
AIRLOCK_PUBLIC AirlockVm *airlock_vm_new (AirlockArch arch, const AirlockGuestImage *image,
                                          const AirlockVmOptions *options, GError **error);
AIRLOCK_PUBLIC void airlock_vm_free (AirlockVm *vm);

/* Whether the sinkhole network (docs/sinkhole.md) can be served here:
 * starts airlock-sinkhole in a private temporary directory, waits until it
 * is ready (its namespace, tap and nftables rules made), and stops it.
 * FALSE with @error saying what the process said (no network namespace
 * allowed, no /dev/net/tun, nftables missing in the kernel, …). */
AIRLOCK_PUBLIC gboolean airlock_network_check (GError **error);

/* Makes this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER), so
 * that the QEMU processes the embedded driver daemonizes become its children
 * and each run reaps its own QEMU the moment it kills it.  Without it they
 * are PID 1's orphans and libvirt waits for PID 1 to reap them, up to ~2 s
 * per run on hosts whose init reaps slowly.  Process-wide: any orphaned
 * descendant then comes to this process.  airlock reaps only QEMUs: each
 * run its own, by pid, and a thread (started with the first libvirt connection, polling every 50 ms)
 * the daemonized ones no run holds, such as libvirt's capability probes —
 * zombie children named qemu-system-* in another session than ours; a QEMU
 * the program spawned itself is left to it.  Other orphans stay zombies
 * until the program reaps them or exits.  `airlock` and
 * airlock_test_init() call it; a program that forks daemons of its own may
 * prefer not to.  Returns FALSE with a G_IO_ERROR when the kernel refuses. */
AIRLOCK_PUBLIC gboolean airlock_vm_adopt_qemu (GError **error);

/* Boots the guest, completes the handshake, follows the run to its trailer
 * and powers it off, or ends it on the first failure.  Returns FALSE with
 * @error set only when the domain could not be started at all; otherwise
 * TRUE, and airlock_vm_is_complete () tells whether the evidence is whole. */
AIRLOCK_PUBLIC gboolean airlock_vm_run (AirlockVm *vm, GError **error);

/* Ends a run before its trailer, from any thread (a person gave up on an
 * interactive session): airlock_vm_run() stops following the channel,
 * marks it inconclusive with @reason (copied; "the session was ended by
 * SIGINT") and tears the domain down as for any other end.  No effect once
 * the run has ended; the first reason stands. */
AIRLOCK_PUBLIC void airlock_vm_cancel (AirlockVm *vm, const char *reason);
/* TRUE when the trailer was accepted and nothing went wrong. */
AIRLOCK_PUBLIC gboolean airlock_vm_is_complete (AirlockVm *vm);
/* Why the run is not complete (a sentence), or NULL when it is. */
AIRLOCK_PUBLIC const char *airlock_vm_get_reason (AirlockVm *vm);
AIRLOCK_PUBLIC AirlockChannel *airlock_vm_get_channel (AirlockVm *vm);
/* With a run spec: the EVENT frames accepted so far, decoded (owned by the
 * VM; valid until it is freed).  A frame the log refuses (a RESULT naming no
 * call, …) makes the run inconclusive like any malformed frame.  NULL for a
 * boot check or before airlock_vm_run(). */
AIRLOCK_PUBLIC AirlockEventLog *airlock_vm_get_events (AirlockVm *vm);
/* Every frame the guest's NIC sent or received, as a pcap file (what QEMU's
 * filter-dump wrote), or NULL when the run had no NIC.  Transfer full. */
AIRLOCK_PUBLIC GBytes *airlock_vm_get_pcap (AirlockVm *vm);
/* Why there is no pcap although the run had a NIC (unreadable, too big). */
AIRLOCK_PUBLIC const char *airlock_vm_get_pcap_error (AirlockVm *vm);
/* The workload's stdout and stderr (with spec->stdio), as received, at most
 * 16 MiB each (the rest is counted, see get_output_truncated). */
AIRLOCK_PUBLIC GBytes *airlock_vm_get_stdout (AirlockVm *vm);
AIRLOCK_PUBLIC GBytes *airlock_vm_get_stderr (AirlockVm *vm);
AIRLOCK_PUBLIC gboolean airlock_vm_get_output_truncated (AirlockVm *vm);
/* Console output (kernel log and guest init lines), as received. */
AIRLOCK_PUBLIC GBytes *airlock_vm_get_console (AirlockVm *vm);
AIRLOCK_PUBLIC const AirlockVmTimings *airlock_vm_get_timings (AirlockVm *vm);
/* "kvm" or "tcg". */
AIRLOCK_PUBLIC const char *airlock_vm_get_accel (AirlockVm *vm);
/* A one-line notice about the accelerator choice ("KVM is not usable here:
 * …; using TCG"), or NULL. */
AIRLOCK_PUBLIC const char *airlock_vm_get_accel_notice (AirlockVm *vm);
/* Leftover domains removed while preparing this VM (names). */
AIRLOCK_PUBLIC GPtrArray *airlock_vm_get_swept (AirlockVm *vm);
AIRLOCK_PUBLIC const char *airlock_vm_get_uri (AirlockVm *vm);
AIRLOCK_PUBLIC const char *airlock_vm_get_domain_name (AirlockVm *vm);
/* With a spec asking for a terminal (spec->tty): tells the guest the
 * workload's terminal is now @rows x @cols; the kernel there signals
 * SIGWINCH to its foreground process group.  Any thread, while the run
 * goes on.  FALSE with @error (AIRLOCK_VM_ERROR_FAILED) when the run has
 * no terminal, its stdio port is not connected (yet, or any more), or the
 * send failed. */
AIRLOCK_PUBLIC gboolean airlock_vm_send_winsize (AirlockVm *vm, guint16 rows, guint16 cols,
                                                 GError **error);
/* The hypervisor's and libvirt's versions as "MAJOR.MINOR.MICRO" (what
 * the connection reports; "unknown" when it does not).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_vm_get_qemu_version (AirlockVm *vm);
AIRLOCK_PUBLIC char *airlock_vm_get_libvirt_version (AirlockVm *vm);
/* Where the hypervisor reads the files a run boots from, in *@ret_detail
 * (transfer full): a local one reads airlock's cache; a remote one the
 * volumes airlock uploads to its storage pool "airlock" (what it has of
 * it).  FALSE when the hypervisor cannot say (`airlock doctor`). */
AIRLOCK_PUBLIC gboolean airlock_vm_describe_storage (AirlockVm *vm, char **ret_detail);
/* The version of the libvirt library this process runs with, with no
 * connection (`airlock doctor`): "MAJOR.MINOR.MICRO", or NULL when the
 * library does not answer.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_libvirt_library_version (void);
/* The heartbeat period and tolerance the run's channel checks (the
 * defaults applied). */
AIRLOCK_PUBLIC void airlock_vm_get_heartbeat (AirlockVm *vm, guint *ret_period_ms,
                                              guint *ret_tolerance_ms);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockVm, airlock_vm_free)

G_END_DECLS
