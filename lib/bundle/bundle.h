/* The evidence bundle: one directory per run and arch, everything a third
 * party needs to re-check the verdict without trusting the machine that
 * ran it (docs/bundle.md).
 *
 *   raw, as received     host.bin (host hello + run spec), evidence.bin,
 *                        console.log, stdin, stdout, stderr, net.pcap,
 *                        network.jsonl (the sinkhole's records, as its
 *                        process wrote them)
 *   recorded by the host frames.jsonl (per accepted frame: offset, size,
 *                        receipt times, chain value), chain-head,
 *                        manifest.json (every input with digest and
 *                        version, the run, every file's SHA-256),
 *                        policy.txt, manifest.hmac (with a key)
 *   derived              events.jsonl, verdict.json, summary.md,
 *                        attestation.intoto.json
 *
 * Every derived file is a pure function of the raw and recorded ones
 * (AirlockBundleFacts): the writer makes it from the live run, and
 * `airlock verify` makes it again from the files and compares bytes.
 *
 * Files are created with O_EXCL and never rewritten.  The streams that
 * arrive during the run (evidence, console, stdio) are written as they
 * come; a file INCOMPLETE exists from the start and is removed only when
 * the manifest (and its HMAC) are on disk, so a crash leaves what had
 * arrived, marked. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"
#include "../arch.h"
#include "../evidence/event.h"
#include "../gate/verdict.h"
#include "../image/image.h"
#include "../guestimg/guest-image.h"
#include "../policy/policy.h"
#include "../record/run-record.h"
#include "../vm/vm.h"

G_BEGIN_DECLS

#define AIRLOCK_BUNDLE_FORMAT "airlock-bundle/v1"
#define AIRLOCK_BUNDLE_INCOMPLETE "INCOMPLETE"
#define AIRLOCK_STATEMENT_TYPE "https://in-toto.io/Statement/v1"
#define AIRLOCK_RUNTIME_TRACE_TYPE "https://in-toto.io/attestation/runtime-trace/v0.2"

#define AIRLOCK_BUNDLE_ERROR (airlock_bundle_error_quark ())
typedef enum {
  AIRLOCK_BUNDLE_ERROR_EXISTS,   /* the directory (or a file in it) exists already */
  AIRLOCK_BUNDLE_ERROR_IO,       /* a file could not be created or written */
  AIRLOCK_BUNDLE_ERROR_INVALID,  /* verify: the bundle cannot be read as one */
  AIRLOCK_BUNDLE_ERROR_KEY,      /* an HMAC key outside AIRLOCK_BUNDLE_KEY_MIN..MAX */
} AirlockBundleError;

AIRLOCK_PUBLIC GQuark airlock_bundle_error_quark (void);

/* What the derived files are made of. */
typedef struct {
  AirlockArch arch;
  const char *case_name;        /* or NULL */
  const char *reference;        /* the image as given, or NULL (a test program) */
  const char *index_digest;     /* or NULL */
  const char *manifest_digest;  /* or NULL */
  const char *config_digest;    /* or NULL */
  const char *airlock_version;  /* of the airlock that ran it */
  const char *accel;
  const char *recorder;         /* airlock_recorder_to_string() of the hello's, or NULL
                                 * (evidence from before the hello said it) */
  const char *chain_head;       /* hex */
  const char *evidence_sha256;  /* of evidence.bin */
  const char *policy_text;
  const char *started;          /* RFC 3339, UTC */
  const char *finished;
  GPtrArray *events;            /* AirlockEvent *, or NULL */
  const AirlockVerdict *verdict;
  /* The sinkhole's records (network.jsonl) as read, or NULL; and, when a
   * sinkhole served the run and there are none, why (the manifest's
   * run.sinkhole_error, or why the file did not read).  NULL for a run no
   * sinkhole served, and for a bundle written before the sinkhole, whose
   * derived files must come out as they did then. */
  const AirlockSinkholeLog *sinkhole;
  const char *sinkhole_error;
  /* A bundle made before verdicts said which clock ran: verdict.json is
   * written (again) without "clock", as it was. */
  gboolean before_clock;
} AirlockBundleFacts;

/* Deterministic serialisations (transfer full). */
AIRLOCK_PUBLIC char *airlock_bundle_events_jsonl (AirlockArch arch, GPtrArray *events);
AIRLOCK_PUBLIC char *airlock_bundle_frames_jsonl (GPtrArray *frames);
AIRLOCK_PUBLIC char *airlock_bundle_verdict_json (const AirlockBundleFacts *facts);
AIRLOCK_PUBLIC char *airlock_bundle_summary_md (const AirlockBundleFacts *facts);
/* The in-toto Statement v1 with a runtime-trace predicate: subject the
 * image manifest digest (statement.c). */
AIRLOCK_PUBLIC char *airlock_bundle_statement_json (const AirlockBundleFacts *facts);

/* ---- writing ---- */

typedef struct _AirlockBundle AirlockBundle;

/* Creates @dir (its parent as needed; @dir itself must not exist) with
 * INCOMPLETE and the stream files open for writing.  NULL with @error
 * (AIRLOCK_BUNDLE_ERROR_EXISTS / _IO). */
AIRLOCK_PUBLIC AirlockBundle *airlock_bundle_create (const char *dir, GError **error);
/* An AirlockVmOptions.record_func: appends to the stream's file as it
 * arrives (stdio capped like the VM's copy).  @user_data is the bundle.
 * A write failure is remembered and reported by finish(). */
AIRLOCK_PUBLIC void airlock_bundle_record (AirlockVmRecord what, const guint8 *data, gsize len,
                                           gpointer user_data);
AIRLOCK_PUBLIC const char *airlock_bundle_get_dir (AirlockBundle *bundle);
/* Renames the unfinished bundle's directory to @new_dir (not existing, on
 * the same filesystem), between the run that wrote it and finish(): a
 * pool's run whose host was lost keeps its first attempt so.  FALSE with
 * @error (AIRLOCK_BUNDLE_ERROR_EXISTS / _IO) naming both. */
AIRLOCK_PUBLIC gboolean airlock_bundle_move (AirlockBundle *bundle, const char *new_dir,
                                             GError **error);

/* What finish() records besides the VM's own evidence. */
typedef struct {
  AirlockArch arch;
  const char *case_name;
  const AirlockImage *image;          /* or NULL (a test program) */
  const AirlockGuestImage *guest;
  const AirlockRunRecord *record;     /* the finished run (airlock_vm_get_record()) */
  const char *const *args;            /* the case's arguments (replacing Cmd), or NULL */
  const char *const *env_set;         /* the case's env overrides: "NAME=VALUE", or "NAME"
                                       * for one removed; NULL-terminated, or NULL */
  guint64 clock_ns;                   /* the guest clock the case set, or 0 */
  /* The case's sinkhole fixtures (airlock_case_fixture_line()), or NULL:
   * what `airlock replay` must be given again. */
  const char *const *serve;
  gboolean icount;                    /* the guest ran with -icount */
  gboolean shell;                     /* an `airlock shell` session, not the image's command */
  gboolean tty;                       /* its stdio was a terminal */
  const char *guest_program;          /* a test program's NAME instead of an image, or NULL */
  const char *const *argv;            /* what the supervisor ran */
  const char *const *envp;
  const char *cwd, *user;
  guint timeout_ms;
  gboolean controls;
  const AirlockPolicy *policy;
  const AirlockVerdict *verdict;      /* airlock_verdict_compute (record, policy) */
  GBytes *key;                        /* HMAC key, or NULL */
  const char *gate_id;                /* the set this bundle belongs to (airlock_bundle_set_new_id()), or NULL */
  gint64 started_real_us, finished_real_us;
} AirlockBundleInput;

/* Writes the rest of the bundle, then the manifest, its HMAC, and removes
 * INCOMPLETE.  FALSE with @error when any of it fails (INCOMPLETE stays,
 * with the reason appended). */
AIRLOCK_PUBLIC gboolean airlock_bundle_finish (AirlockBundle *bundle, const AirlockBundleInput *input,
                                               GError **error);
/* Gives up on the bundle: INCOMPLETE stays, with @reason appended. */
AIRLOCK_PUBLIC void airlock_bundle_abandon (AirlockBundle *bundle, const char *reason);
/* Closes what is open.  An unfinished bundle keeps INCOMPLETE.  Accepts NULL. */
AIRLOCK_PUBLIC void airlock_bundle_free (AirlockBundle *bundle);

/* ---- verifying ---- */

typedef struct {
  char *file;       /* the bundle file at fault ("evidence.bin"), or NULL */
  char *message;    /* "frame 7 (seq 7, bytes 512-640): …" */
} AirlockBundleProblem;

typedef struct {
  GPtrArray *problems;      /* AirlockBundleProblem *, in the order found; empty: verified */
  char *arch;               /* from the manifest, or NULL */
  char *verdict;            /* "pass", …: what the evidence says (re-derived), or NULL */
  char *manifest_digest;    /* the image digest it is bound to, or NULL */
  char *index_digest;
  char *reference;          /* the image as the run was given it, or NULL */
  char *gate_id;            /* the gate (set) the manifest names, or NULL */
  char *manifest_sha256;    /* of the manifest.json bytes verified, or NULL */
  gboolean hmac_checked;    /* a key was given and the HMAC matched */
  gboolean hmac_present;
} AirlockBundleReport;

/* Re-derives everything checkable in the bundle at @dir: every file's
 * digest and size against the manifest (missing and unlisted files too),
 * the HMAC of the manifest under @key (when given; a bundle without one
 * is then a problem), the channel replayed from host.bin and evidence.bin
 * (frame by frame against frames.jsonl, the chain head), events.jsonl
 * decoded again, network.jsonl read and held against net.pcap
 * (airlock_network_check_capture()), the verdict recomputed from the
 * events, net.pcap, network.jsonl and policy.txt, and summary.md and
 * attestation.intoto.json made again.
 * Never fails: everything wrong is a problem in the report. */
AIRLOCK_PUBLIC AirlockBundleReport *airlock_bundle_verify (const char *dir, GBytes *key);
AIRLOCK_PUBLIC void airlock_bundle_report_free (AirlockBundleReport *report);

/* ---- keys (bundle-set.c) ---- */

/* The one rule for an HMAC key, wherever one is read (gate, run, replay,
 * verify, the case API): shorter keys can be guessed, and verify must not
 * accept a key the gate would refuse. */
#define AIRLOCK_BUNDLE_KEY_MIN 16
#define AIRLOCK_BUNDLE_KEY_MAX 65536

/* FALSE with @error (AIRLOCK_BUNDLE_ERROR_KEY, naming @what: "the key
 * file 'k'") when @key's length is outside the rule. */
AIRLOCK_PUBLIC gboolean airlock_bundle_key_check (GBytes *key, const char *what, GError **error);
/* The bytes of @path as they are (not trimmed), checked by the rule.
 * Transfer full; NULL with @error (G_FILE_ERROR or _KEY). */
AIRLOCK_PUBLIC GBytes *airlock_bundle_key_load (const char *path, GError **error);

/* ---- a gate's set of bundles (bundle-set.c) ---- */

#define AIRLOCK_BUNDLE_SET_FORMAT "airlock-bundle-set/v1"
#define AIRLOCK_BUNDLE_SET_FILE "set.json"
#define AIRLOCK_BUNDLE_SET_HMAC "set.hmac"

/* The directory a run whose pool host was lost mid-run leaves its first
 * attempt's bundle in, beside the bundle of the run that replaced it:
 * ARCH.attempt-1 in a gate's set, named in set.json. */
#define AIRLOCK_BUNDLE_ATTEMPT_SUFFIX ".attempt-1"

/* A fresh random gate id (32 hex digits).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_bundle_set_new_id (void);

typedef struct {
  const char *gate_id;                  /* what each bundle's manifest names */
  const gboolean *arches;               /* [AIRLOCK_N_ARCHES]: the arches asked for */
  const char *reference;                /* the image as given, or NULL */
  const char *index_digest;             /* or NULL */
  GBytes *key;                          /* HMAC key, or NULL: unsigned */
} AirlockBundleSetInput;

/* Writes @dir/set.json (and set.hmac with a key) once every arch's run
 * ended: each asked-for arch's finished bundle in @dir/ARCH/ named by the
 * SHA-256 of its manifest.json, null for one not finished; and each
 * first attempt found in @dir/ARCH.attempt-1/ the same way.  FALSE with
 * @error when the record exists already or cannot be written. */
AIRLOCK_PUBLIC gboolean airlock_bundle_set_write (const char *dir, const AirlockBundleSetInput *in,
                                                  GError **error);

typedef struct {
  GPtrArray *problems;      /* AirlockBundleProblem *, of the set itself (file relative to
                             * the directory: "set.json", "arm64", "arm64/manifest.json") */
  gboolean asked[AIRLOCK_N_ARCHES];           /* the arches the set names */
  AirlockBundleReport *bundles[AIRLOCK_N_ARCHES];  /* each bundle found, verified, or NULL */
  char *gate_id;
  gboolean hmac_checked;
  gboolean hmac_present;
  /* The first attempt of an arch whose pool host was lost mid-run
   * (ARCH.attempt-1, named in set.json), verified, or NULL. */
  AirlockBundleReport *attempts[AIRLOCK_N_ARCHES];
} AirlockBundleSetReport;

/* TRUE when @dir looks like a gate's --out directory (set.json or an
 * ARCH/ subdirectory) rather than one bundle. */
AIRLOCK_PUBLIC gboolean airlock_bundle_dir_is_set (const char *dir);
/* Verifies the gate directory @dir as one set: set.json present, parsed,
 * and with @key signed (set.hmac); every arch it names present as ARCH/,
 * each bundle verified (airlock_bundle_verify()) and naming that arch,
 * the set's gate id and image, with the manifest digest the set records;
 * the same of each first attempt the set names (ARCH.attempt-1, which must
 * be inconclusive); nothing else in @dir.  Never fails: the report holds
 * the set's problems and each bundle's own report. */
AIRLOCK_PUBLIC AirlockBundleSetReport *airlock_bundle_set_verify (const char *dir, GBytes *key);
AIRLOCK_PUBLIC void airlock_bundle_set_report_free (AirlockBundleSetReport *report);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBundle, airlock_bundle_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBundleSetReport, airlock_bundle_set_report_free)
G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockBundleReport, airlock_bundle_report_free)

G_END_DECLS
