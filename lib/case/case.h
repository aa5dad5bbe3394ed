/* The C case API: what a test suite or a pipeline links against.
 *
 *   AirlockSession  one arch, one libvirt connection, one accelerator, one
 *                   cache: the guest image is found (or built) once.
 *   AirlockCase     what to run: an image reference, its arguments, env
 *                   overrides, stdin, its time limits, the negative controls,
 *                   the allow-list, where to write the evidence bundle.
 *   AirlockRun      one case running: its stdin can be written and its
 *                   stdout read line by line while it runs (speak a line
 *                   protocol such as JSON-RPC to the image), then waited.
 *   AirlockResult   the run judged: verdict and reasons, attempts, flows,
 *                   controls, digests, exit status, output, bundle path.
 *
 * A session is used from one thread at a time; one run per session at a
 * time.  Every failure is a GError; the library never prints. */
#pragma once

#include <gio/gio.h>

#include "../airlock-macros.h"
#include "../gate/verdict-kind.h"
#include "../arch.h"
#include "../paths.h"
#include "../vm/vm.h"
#include "../image/image.h"

G_BEGIN_DECLS

/* Declared here by name only, so the case API stays above them without
 * including them (tests/unit/layers.sh): the policy (policy/policy.h), the
 * guest image (guestimg/guest-image.h), the verdict in full and the run
 * record (airlock_result_get_verdict_details(), _get_record():
 * gate/verdict.h, record/run-record.h). */
typedef struct _AirlockPolicy AirlockPolicy;
typedef struct _AirlockGuestImage AirlockGuestImage;
typedef struct _AirlockVerdict AirlockVerdict;
typedef struct _AirlockRunRecord AirlockRunRecord;

#define AIRLOCK_CASE_ERROR (airlock_case_error_quark ())
typedef enum {
  AIRLOCK_CASE_ERROR_INVALID,   /* the case cannot be run as described (the message names the field) */
  AIRLOCK_CASE_ERROR_TIMEOUT,   /* airlock_run_read_line(): no line within the time given */
  AIRLOCK_CASE_ERROR_CLOSED,    /* the workload's stdout ended, or its stdin is closed */
  AIRLOCK_CASE_ERROR_BUNDLE,    /* the evidence bundle could not be written (the run's result stands) */
} AirlockCaseError;

AIRLOCK_PUBLIC GQuark airlock_case_error_quark (void);


/* ---- session ---- */

/* The guest's clock (AirlockSessionOptions.clock). */
typedef enum {
  /* The default.  The clock runs ahead while the guest is idle (QEMU's
   * instruction counting with sleep=off: when every vCPU waits, the clock
   * jumps to the next timer), so a workload that sleeps for hours before
   * it phones home is seen doing it within seconds.  A case then has two
   * limits: its timeout, of wall time, and its guest time
   * (airlock_case_set_guest_time(), six hours by default).  TCG only:
   * AIRLOCK_ACCEL_AUTO takes TCG without probing KVM, and
   * AIRLOCK_ACCEL_KVM makes the run fail to start (AIRLOCK_VM_ERROR_KVM). */
  AIRLOCK_CLOCK_WARP = 0,
  /* The guest's clock follows the host's: the timeout is of guest time as
   * much as wall time, and any accelerator works. */
  AIRLOCK_CLOCK_REAL,
} AirlockClock;

/* Parses "warp" or "real".  FALSE for anything else. */
AIRLOCK_PUBLIC gboolean airlock_clock_from_string (const char *name, AirlockClock *ret_clock);
/* "warp" or "real" (static). */
AIRLOCK_PUBLIC const char *airlock_clock_to_string (AirlockClock clock);

typedef struct {
  const char *uri;            /* libvirt URI; NULL: $AIRLOCK_CONNECT, else the embedded driver */
  const char *cache_dir;      /* NULL: airlock_default_cache_dir () */
  AirlockAccel accel;         /* AIRLOCK_ACCEL_AUTO: KVM when a probe boot works, else TCG */
  guint boot_timeout_ms;      /* domain start → guest ready; 0: 60000 */
  gboolean icount;            /* kept for source compatibility: TRUE asks for the warped
                               * clock, which is QEMU's instruction counting (-icount) */
  /* Long work (kernel download, rootfs disk build) reports here; NULL: quiet. */
  AirlockProgressFunc progress;
  gpointer progress_data;
  /* The most an image's layers may decompress to (AirlockImageDiskOptions);
   * 0: $AIRLOCK_MAX_IMAGE_SIZE, else 8 GiB. */
  guint64 max_image_bytes;
  AirlockClock clock;         /* AIRLOCK_CLOCK_WARP (the default) or AIRLOCK_CLOCK_REAL */
  /* A pool of hypervisors (NULL-terminated; AIRLOCK_URI_EMBEDDED names the
   * embedded driver), used instead of @uri when it holds two or more; with
   * @uri NULL, $AIRLOCK_CONNECT may hold such a list, separated by spaces.
   * Each run goes to the first host that can run the arch (one offering
   * KVM for it first) with a free slot, and waits while all are full; one
   * that fails before the guest booted is retried once on another host,
   * and so is one whose host is lost mid-run when no input of it was
   * used up (its stdin stream unread, no line of it read): its first
   * bundle kept beside the case's (docs/remote.md).  Sessions of several
   * arches with the same list share the hosts' slots. */
  const char *const *uris;
  guint host_slots;           /* runs at once on each host of @uris; 0: 1 */
} AirlockSessionOptions;

typedef struct _AirlockSession AirlockSession;
typedef struct _AirlockResult AirlockResult;

/* Prepares @arch: finds QEMU for it and finds or builds its guest kernel
 * and initramfs (@options may be NULL for the defaults; its strings are
 * copied).  Returns NULL with @error set when it cannot: either this arch
 * cannot run here (airlock_session_error_cannot_run_here() is TRUE: no
 * QEMU for it, or its pinned guest kernel cannot be had — a test skips
 * with the message) or something is broken (an install missing its guest
 * programs or recipes, an unreadable cache — a test fails with it).
 * With a libvirt daemon (a connection URI such as qemu:///system), ignore
 * SIGPIPE in the program, as the airlock command does: libvirt's client
 * leaves it to the application, and a daemon that goes away mid-run would
 * end the process instead of the run (inconclusive).  The library does not
 * change a process's signal dispositions itself. */
AIRLOCK_PUBLIC AirlockSession *airlock_session_new (AirlockArch arch,
                                                    const AirlockSessionOptions *options,
                                                    GError **error);
/* Whether @error (from airlock_session_new()) means the arch cannot run on
 * this host by design, rather than a broken install or environment. */
AIRLOCK_PUBLIC gboolean airlock_session_error_cannot_run_here (const GError *error);
/* Accepts NULL. */
AIRLOCK_PUBLIC void airlock_session_free (AirlockSession *session);
AIRLOCK_PUBLIC AirlockArch airlock_session_get_arch (AirlockSession *session);

/* The session's guest image (kernel, initramfs and their digests). */
AIRLOCK_PUBLIC const AirlockGuestImage *airlock_session_get_guest_image (AirlockSession *session);

/* ---- case ---- */

typedef struct _AirlockCase AirlockCase;

/* A case running @image_ref (oci:DIR[:TAG], oci-archive:FILE[:TAG],
 * docker-archive:FILE[:NAME:TAG|:@N], docker://NAME[:TAG|@DIGEST],
 * containers-storage:NAME) with its own entrypoint, Cmd, Env,
 * WorkingDir and User, the negative controls on, a 30 s timeout, stdin at
 * end of file, the default policy (no egress) and no bundle.  Never
 * NULL. */
AIRLOCK_PUBLIC AirlockCase *airlock_case_new (const char *image_ref);
/* Accepts NULL. */
AIRLOCK_PUBLIC void airlock_case_free (AirlockCase *c);

/* A name for reports and the bundle's manifest ("initialize-has-no-egress");
 * NULL clears it. */
AIRLOCK_PUBLIC void airlock_case_set_name (AirlockCase *c, const char *name);
/* Arguments replacing the image's Cmd (as `docker run IMAGE ARGS…`);
 * NULL or empty: the image's own.  Copied. */
AIRLOCK_PUBLIC void airlock_case_set_args (AirlockCase *c, const char *const *args);
/* Sets NAME=VALUE over the image's Env (replacing an entry of that name);
 * @value NULL removes NAME from the workload's environment.  @name must be
 * non-empty without '=' (checked when the run starts). */
AIRLOCK_PUBLIC void airlock_case_set_env (AirlockCase *c, const char *name, const char *value);
/* Bytes for the workload's stdin, then end of file (a reference is taken).
 * Replaces a stream set before. */
AIRLOCK_PUBLIC void airlock_case_set_stdin_bytes (AirlockCase *c, GBytes *data);
/* A stream forwarded to the workload's stdin as it yields, then end of
 * file (a reference is taken; read from a thread of the run).  Replaces
 * bytes set before.  What was forwarded is kept in the bundle. */
AIRLOCK_PUBLIC void airlock_case_set_stdin_stream (AirlockCase *c, GInputStream *stream);
/* The workload is ended after @seconds (1 … 86400; checked when the run
 * starts): of the guest's time under the real clock, of the host's wall
 * time under the warped one (then the host stops it). */
AIRLOCK_PUBLIC void airlock_case_set_timeout (AirlockCase *c, guint seconds);
/* What @name answers on @port in the sinkhole network (docs/sinkhole.md):
 * a connection to the address the sinkhole handed out for @name gets
 * @response's bytes (raw, or an HTTP response), then its end of the
 * stream.  TLS is not terminated: a fixture on 443 is sent as it is.  A
 * later call for the same name and port replaces the earlier.  FALSE when
 * @name is empty or holds ':', '=', '/' or blanks, or @port is 0. */
AIRLOCK_PUBLIC gboolean airlock_case_serve (AirlockCase *c, const char *name, guint16 port,
                                            GBytes *response);
/* How a bundle's manifest records one fixture (case.serve): "pypi.org.:80
 * sha256:HEX", the name lowercased and absolute.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_case_fixture_line (const char *name, guint16 port,
                                                const char *sha256_hex);
/* Under the warped clock: the guest ends the workload after @seconds of
 * its own time (1 … 604800, a week; default 21600, six hours; checked when
 * the run starts), whichever of this and the timeout comes first.  Under
 * the real clock the timeout alone counts. */
AIRLOCK_PUBLIC void airlock_case_set_guest_time (AirlockCase *c, guint seconds);
/* Whether the negative controls run first, in the same boot.  Without
 * them the verdict is inconclusive (nothing proves the detector saw). */
AIRLOCK_PUBLIC void airlock_case_set_controls (AirlockCase *c, gboolean controls);
/* Appends allow rules (docs/policy.md; one or more lines) to the case's
 * policy.  @name is what error messages call the text ("--allow", a file
 * name).  FALSE with @error (AIRLOCK_POLICY_ERROR) and the policy
 * unchanged when a line does not parse. */
AIRLOCK_PUBLIC gboolean airlock_case_allow (AirlockCase *c, const char *rules, const char *name,
                                            GError **error);
/* Reads a policy file and appends its rules, as airlock_case_allow(). */
AIRLOCK_PUBLIC gboolean airlock_case_load_policy (AirlockCase *c, const char *path, GError **error);
/* Write the run's evidence bundle to @dir, which must not exist yet (its
 * parent is created).  NULL: no bundle. */
AIRLOCK_PUBLIC void airlock_case_set_bundle_dir (AirlockCase *c, const char *dir);
/* With a bundle: sign its manifest with HMAC-SHA256 under @key (a
 * reference is taken; NULL: unsigned), checked by `airlock verify
 * --key-file`.  A key of fewer than 16 bytes (or over 64 KiB) makes
 * airlock_session_start() fail (AIRLOCK_CASE_ERROR_INVALID). */
AIRLOCK_PUBLIC void airlock_case_set_bundle_key (AirlockCase *c, GBytes *key);
/* With a bundle: the gate (set of bundles, one per arch) it belongs to;
 * its manifest names @gate_id, and the gate's set record names the
 * bundle (docs/bundle.md).  NULL: a bundle of its own. */
AIRLOCK_PUBLIC void airlock_case_set_bundle_gate (AirlockCase *c, const char *gate_id);

/* Replaces the case's policy with a copy of @policy. */
AIRLOCK_PUBLIC void airlock_case_set_policy (AirlockCase *c, const AirlockPolicy *policy);
/* The guest's CLOCK_REALTIME before anything runs (ns since the epoch;
 * 0: QEMU's RTC, the host's time): `airlock replay` gives the recorded
 * run's start. */
AIRLOCK_PUBLIC void airlock_case_set_clock (AirlockCase *c, guint64 clock_ns);
/* Instead of an image: /bin/NAME of the guest test programs' root
 * (tests/guest, `airlock run --guest-program`), as root, cwd /, a fixed
 * PATH and HOME; the case's args follow NAME. */
AIRLOCK_PUBLIC void airlock_case_set_guest_program (AirlockCase *c, const char *name);
/* Called with every chunk of the workload's stdout (1) or stderr (2) as it
 * arrives, from a reader thread (`airlock run --stdin -` prints it live). */
AIRLOCK_PUBLIC void airlock_case_set_output_func (AirlockCase *c,
                                                  void (*func) (int stream, const guint8 *data,
                                                                gsize len, gpointer user_data),
                                                  gpointer user_data);
/* `airlock shell`: instead of the image's entrypoint and Cmd, its
 * /bin/sh, with the image's env, cwd and user; when the image has no
 * executable /bin/sh, airlock's static shell, bound read-only at
 * /.airlock/bin/sh (the guest decides in the image's root and logs which;
 * the shell's execve record names it).  The run boots the guest image's
 * shell variant (built once per arch: a pinned busybox-static). */
AIRLOCK_PUBLIC void airlock_case_set_shell (AirlockCase *c, gboolean shell);
/* With @tty the workload's stdio is a pseudo-terminal of @rows x @cols
 * (0: unknown), its controlling terminal, instead of pipes: one output
 * stream (stdout), line editing and ^C in the guest's line discipline.
 * Resize it with airlock_vm_send_winsize() on airlock_run_get_vm(). */
AIRLOCK_PUBLIC void airlock_case_set_tty (AirlockCase *c, gboolean tty, guint16 rows,
                                          guint16 cols);
/* Called for every supervisor record as its frame is accepted
 * (AirlockVmOptions.event_func: the evidence thread, the VM's lock held,
 * quick, no calls into the VM); `airlock shell` prints each attempt live. */
AIRLOCK_PUBLIC void airlock_case_set_event_func (AirlockCase *c,
                                                 void (*func) (const AirlockEvent *event,
                                                               const AirlockEvent *call,
                                                               gpointer user_data),
                                                 gpointer user_data);
/* For airlock's own tests (`airlock run --test-mode`): airlock.test=MODE on
 * the guest kernel's command line, a misbehaviour of the guest init
 * (guest/test-modes.c) that a host check must catch.  NULL: none. */
AIRLOCK_PUBLIC void airlock_case_set_test_mode (AirlockCase *c, const char *mode);

/* ---- a running case ---- */

typedef struct _AirlockRun AirlockRun;

/* Starts @c on @session: resolves the image for the session's arch
 * (every blob checked against its digest), finds or builds its rootfs
 * disk, creates the bundle directory, boots the VM and returns while the
 * case runs in a thread of its own.  When the case has no stdin of its
 * own, the workload's stdin is airlock_run_write_stdin() until
 * airlock_run_close_stdin().  @c is copied: it may be changed or freed.
 *
 * Returns NULL with @error set when the case cannot start: an
 * AIRLOCK_IMAGE_ERROR for the image, AIRLOCK_CASE_ERROR_INVALID for the
 * case, AIRLOCK_CASE_ERROR_BUNDLE when the bundle directory exists or
 * cannot be created, AIRLOCK_VM_ERROR / AIRLOCK_RUN_SPEC_ERROR when the VM
 * cannot be prepared. */
AIRLOCK_PUBLIC AirlockRun *airlock_session_start (AirlockSession *session, const AirlockCase *c,
                                                  GError **error);

/* Sends @len bytes to the workload's stdin.  FALSE with @error
 * (AIRLOCK_CASE_ERROR_CLOSED) after close_stdin(), when the case has stdin
 * of its own, or when the run has ended. */
AIRLOCK_PUBLIC gboolean airlock_run_write_stdin (AirlockRun *run, const void *data, gsize len,
                                                 GError **error);
/* End of file on the workload's stdin.  Idempotent. */
AIRLOCK_PUBLIC void airlock_run_close_stdin (AirlockRun *run);
/* The next line of the workload's stdout, without its '\n' (transfer
 * full), waiting up to @timeout_ms for it.  NULL with @error set:
 * AIRLOCK_CASE_ERROR_TIMEOUT when none came in time (the run goes on);
 * AIRLOCK_CASE_ERROR_CLOSED when the run ended (the rest without a '\n',
 * if any, is returned first as a last line). */
AIRLOCK_PUBLIC char *airlock_run_read_line (AirlockRun *run, guint timeout_ms, GError **error);
/* Closes stdin if still open, waits for the run to end, judges it and
 * writes the bundle.  Returns the result (transfer full), or NULL with
 * @error set when the VM could not be started at all (AIRLOCK_VM_ERROR).
 * A run whose evidence is not whole still returns a result: its verdict is
 * inconclusive.  A bundle that could not be written is reported by
 * airlock_result_get_bundle_error(); the verdict stands.  Call once. */
AIRLOCK_PUBLIC AirlockResult *airlock_run_wait (AirlockRun *run, GError **error);
/* Ends a run that was not waited for (the VM is torn down).  Accepts NULL. */
AIRLOCK_PUBLIC void airlock_run_free (AirlockRun *run);

/* The running VM (for its swept domains, accelerator notice, URI). */
AIRLOCK_PUBLIC AirlockVm *airlock_run_get_vm (AirlockRun *run);
/* What the supervisor is asked to run (argv[0] is the program). */
AIRLOCK_PUBLIC const char *const *airlock_run_get_argv (AirlockRun *run);

/* airlock_session_start() then airlock_run_wait(): the whole case. */
AIRLOCK_PUBLIC AirlockResult *airlock_session_run (AirlockSession *session,
                                                           const AirlockCase *c, GError **error);

/* ---- the result ---- */

/* One network system call of the workload, as the supervisor recorded it
 * before it ran.  Strings are owned by the result. */
typedef struct {
  guint64 seq;               /* the evidence frame that recorded it */
  const char *exe;           /* the calling process's executable, or NULL */
  guint32 pid;               /* in the workload's pid namespace (what ps there shows) */
  const char *syscall;       /* "connect", "sendto", "i386:socketcall", … */
  const char *family;        /* "inet", "inet6", "unix", "netlink", …, or NULL */
  const char *protocol;      /* "tcp", "udp", "icmp", …, or NULL */
  const char *address;       /* "192.0.2.1", "2001:db8::1", "/run/x.sock", …, or NULL */
  guint16 port;              /* inet destinations; 0 otherwise */
  const char *const *dns_names; /* names queried by this call (NULL-terminated, maybe empty) */
  const char *key;           /* the key line: "connect continue inet/stream/tcp 192.0.2.1:80" */
  const char *outcome;       /* "ECONNREFUSED", "sent", "denied: raw-socket", … */
  gboolean egress;           /* it names a destination off the guest (loopback is not egress) */
  gboolean admitted;         /* egress the policy admits */
  gboolean denied;           /* the supervisor refused it */
  /* The name the sinkhole's DNS handed the destination's address out for
   * in this run ("pypi.org."), or NULL: what a policy's `host=` matches. */
  const char *host;
} AirlockAttempt;

/* One exchange the sinkhole network took in, from its host-side records
 * (docs/sinkhole.md).  Strings are owned by the result; NULL when absent. */
typedef struct {
  const char *kind;          /* "dns", "tcp", "udp", "icmp" */
  const char *address;       /* the destination the guest sent to */
  guint16 port;
  const char *name;          /* the name the address was handed out for */
  const char *question;      /* dns: the name asked */
  const char *const *answers;/* dns: the addresses answered (NULL-terminated, maybe empty) */
  const char *protocol;      /* tcp: "http", "tls", "ssh", "dns", "raw", "none" */
  const char *http_method, *http_path, *http_host, *http_user_agent;
  const char *tls_sni, *tls_version;
  const char *ssh_banner;
  guint64 bytes_in, bytes_out;
  const char *response;      /* tcp: "closed" or "fixture NAME:PORT" */
} AirlockResultExchange;

/* One destination the guest's NIC sent to, from the host-side capture. */
typedef struct {
  const char *key;           /* "inet/stream/tcp 192.0.2.1:80", as attempts are keyed */
  const char *address;
  guint16 port;
  const char *protocol;      /* "tcp", "udp", "icmp", … */
  guint64 packets;
  const char *const *names;  /* DNS names, TLS SNI and HTTP Hosts seen (NULL-terminated) */
  gboolean attributed;       /* a supervisor record explains it */
} AirlockResultFlow;

/* One negative control: it must be in the supervisor's records and in the
 * capture, or the detector was blind. */
typedef struct {
  const char *name;          /* the probe's name, "dns-udp", "tcp-connect", … (an IPv4 and an IPv6
                              * control share it: their keys differ) */
  const char *key;
  gboolean by_supervisor;
  gboolean in_capture;
} AirlockResultControl;

AIRLOCK_PUBLIC AirlockArch airlock_result_get_arch (AirlockResult *result);
AIRLOCK_PUBLIC const char *airlock_result_get_case_name (AirlockResult *result);
AIRLOCK_PUBLIC AirlockVerdictKind airlock_result_get_verdict (AirlockResult *result);
/* Why the verdict is not pass, one sentence each (NULL-terminated). */
AIRLOCK_PUBLIC const char *const *airlock_result_get_reasons (AirlockResult *result);
/* The workload's network calls (AirlockAttempt *), in order; the negative
 * controls' are not among them. */
AIRLOCK_PUBLIC GPtrArray *airlock_result_get_attempts (AirlockResult *result);
/* AirlockResultFlow *, in order of their first packet. */
AIRLOCK_PUBLIC GPtrArray *airlock_result_get_flows (AirlockResult *result);
/* AirlockResultExchange *, in the order the sinkhole recorded them; empty
 * when no sinkhole served the run. */
AIRLOCK_PUBLIC GPtrArray *airlock_result_get_exchanges (AirlockResult *result);
/* AirlockResultControl *, in the probe's order; empty without controls. */
AIRLOCK_PUBLIC GPtrArray *airlock_result_get_controls (AirlockResult *result);
/* "sha256:…" digests the verdict is bound to (index: NULL for a single
 * manifest), and the reference as given. */
AIRLOCK_PUBLIC const char *airlock_result_get_reference (AirlockResult *result);
AIRLOCK_PUBLIC const char *airlock_result_get_index_digest (AirlockResult *result);
AIRLOCK_PUBLIC const char *airlock_result_get_manifest_digest (AirlockResult *result);
AIRLOCK_PUBLIC const char *airlock_result_get_config_digest (AirlockResult *result);
/* TRUE when the evidence channel ended with a valid trailer; else
 * airlock_result_get_incomplete_reason() says why. */
AIRLOCK_PUBLIC gboolean airlock_result_is_complete (AirlockResult *result);
AIRLOCK_PUBLIC const char *airlock_result_get_incomplete_reason (AirlockResult *result);
/* The workload's exit: TRUE and its wait status when it was reported. */
AIRLOCK_PUBLIC gboolean airlock_result_get_wait_status (AirlockResult *result, int *ret_status);
/* Its exit code when it exited normally, else -1. */
AIRLOCK_PUBLIC int airlock_result_get_exit_code (AirlockResult *result);
/* Its stdout / stderr as received (at most 16 MiB each; transfer none). */
AIRLOCK_PUBLIC GBytes *airlock_result_get_stdout (AirlockResult *result);
AIRLOCK_PUBLIC GBytes *airlock_result_get_stderr (AirlockResult *result);
/* The bundle directory, or NULL without one. */
AIRLOCK_PUBLIC const char *airlock_result_get_bundle_dir (AirlockResult *result);
/* Why the bundle could not be written whole (it is then marked
 * incomplete), or NULL. */
AIRLOCK_PUBLIC const char *airlock_result_get_bundle_error (AirlockResult *result);
/* "kvm" or "tcg". */
AIRLOCK_PUBLIC const char *airlock_result_get_accel (AirlockResult *result);
/* The libvirt URI of the hypervisor that ran the case (the one of a pool
 * that was chosen). */
AIRLOCK_PUBLIC const char *airlock_result_get_hypervisor (AirlockResult *result);
/* When a host of a pool failed the run and another ran it: the first
 * host's URI and why ("URI: reason"); else NULL. */
AIRLOCK_PUBLIC const char *airlock_result_get_host_failure (AirlockResult *result);
/* When that host was lost mid-run (after the guest booted), the first
 * attempt's finished bundle (inconclusive, its evidence kept): the case's
 * bundle directory with AIRLOCK_BUNDLE_ATTEMPT_SUFFIX; else NULL (also
 * when it failed before the boot: then nothing ran, nothing was kept). */
AIRLOCK_PUBLIC const char *airlock_result_get_lost_attempt (AirlockResult *result);
/* When a run whose host of a pool was lost mid-run could have been made
 * again on another host and was not: that host and why ("'URI': reason");
 * the lost run's verdict stands.  Else NULL. */
AIRLOCK_PUBLIC const char *airlock_result_get_retry_error (AirlockResult *result);
/* The clock the run had, and how long its workload was watched, from its
 * start to its end: in the guest's time and in the host's wall time (ms;
 * -1 when not known, as when it never started).  Under the warped clock
 * the first can be hours while the second is seconds. */
AIRLOCK_PUBLIC AirlockClock airlock_result_get_clock (AirlockResult *result);
AIRLOCK_PUBLIC gint64 airlock_result_get_observed_guest_ms (AirlockResult *result);
AIRLOCK_PUBLIC gint64 airlock_result_get_observed_wall_ms (AirlockResult *result);
/* The run in full, as the airlock command reports it: the verdict with
 * its counts and every attempt judged (lib/gate/verdict.h), the run record
 * (lib/record/run-record.h), the image as resolved (NULL for a guest
 * program).  Owned by the result. */
AIRLOCK_PUBLIC const AirlockVerdict *airlock_result_get_verdict_details (AirlockResult *result);
AIRLOCK_PUBLIC const AirlockRunRecord *airlock_result_get_record (AirlockResult *result);
AIRLOCK_PUBLIC const AirlockImage *airlock_result_get_image (AirlockResult *result);
/* Accepts NULL. */
AIRLOCK_PUBLIC void airlock_result_free (AirlockResult *result);

/* The attempt in one line, for people: its key line, who made it and
 * what came of it —
 *   "connect continue inet/stream/tcp 198.51.100.80:80 by /usr/local/bin/egress-probe (pid 2): ECONNREFUSED"
 * (the key line carries " dns=NAME" per name queried).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_attempt_to_string (const AirlockAttempt *attempt);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockSession, airlock_session_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockCase, airlock_case_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockRun, airlock_run_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockResult, airlock_result_free)

G_END_DECLS
