/* The state behind the case API (case.h), shared by the files that make it:
 *
 *   session.c  the session: QEMU check and guest image, one run at a time
 *   case.c     the case: image, args, env overrides, stdin, timeout, controls,
 *              policy, fixtures, bundle (copied when a run starts)
 *   prepare.c  what a run runs: image → command, env, disk; or a guest test
 *              program; or the shell; the fixtures as files
 *   run.c      a running case: run spec → VM in a thread, stdin over a socket
 *              pair, stdout lines; wait: verdict, bundle
 *   result.c   the result in public terms
 *
 * Also what the unit tests and benchmarks reach beyond the public case API
 * (the command uses case.h alone). */
#pragma once

#include "case/case.h"
#include "gate/verdict.h"
#include "image/image.h"
#include "net/flows.h"
#include "record/run-record.h"
#include "bundle/bundle.h"
#include "evidence/spec.h"
#include "vm/vm.h"

G_BEGIN_DECLS

const char *airlock_case_get_image_ref (const AirlockCase *c);

/* The image resolved for the run's arch, or NULL for a guest program. */
const AirlockImage *airlock_run_get_image (AirlockRun *run);

/* The capture (or NULL).  Owned by the result. */
AirlockCapture *airlock_result_get_capture (AirlockResult *result);

/* result.c: the result of a finished run (takes @verdict, @record,
 * @image).  No AirlockVm: the record is the run. */
AirlockResult *airlock_result_new (AirlockArch arch, const char *case_name, AirlockImage *image,
                                   AirlockVerdict *verdict, AirlockRunRecord *record);
void airlock_result_set_bundle (AirlockResult *result, const char *dir, const char *error);
void airlock_result_set_host_failure (AirlockResult *result, const char *failure);
void airlock_result_set_lost_attempt (AirlockResult *result, const char *bundle_dir);
void airlock_result_set_retry_error (AirlockResult *result, const char *error);

#define DEFAULT_TIMEOUT_S 30
#define MAX_TIMEOUT_S 86400
/* Under the warped clock, how much of its own time the guest gives the
 * workload: six hours covers the daily and hourly timers of a program that
 * waits before it phones home, and costs ~15 s of wall time when the guest
 * sleeps through them (bench/clock).  A week at most. */
#define DEFAULT_GUEST_TIME_S (6 * 3600)
#define MAX_GUEST_TIME_S (7 * 86400)

/* Where the image's root is mounted in the guest, and the disk serial the
 * guest finds it by (guest/rootfs.c). */
#define IMAGE_ROOT "/airlock/image"
#define IMAGE_DISK_SERIAL "airlock-root"
/* The guest test programs' root (tests/guest), and where the shell
 * variant of the guest image keeps airlock's static shell
 * (AIRLOCK_SPEC_SHELL, lib/guestimg/shell-private.h). */
#define TESTROOT "/airlock/testroot"
#define SHELL_DIR "/airlock/shell"

struct _AirlockSession {
  AirlockArch arch;
  char *uri;
  char **uris;                       /* a pool of two or more hypervisors, or NULL */
  guint host_slots;
  char *cache_dir;
  AirlockAccel accel;
  guint boot_timeout_ms;
  AirlockClock clock;
  AirlockProgressFunc progress;
  gpointer progress_data;
  guint64 max_image_bytes;
  AirlockGuestImage *guest;          /* the plain guest image */
  AirlockGuestImage *guest_testroot; /* with the test programs, made when a case needs it */
  gboolean busy;                     /* a run is going */
  AirlockGuestImage *guest_shell;    /* with the static shell, made when a shell case needs it */
};

typedef void (*OutputFunc) (int stream, const guint8 *data, gsize len, gpointer user_data);
typedef void (*EventFunc) (const AirlockEvent *event, const AirlockEvent *call, gpointer user_data);

struct _AirlockCase {
  char *name;
  char *image_ref;
  char *guest_program;
  GStrv args;
  GPtrArray *env_names;     /* char *, in order set */
  GPtrArray *env_values;    /* char * or NULL (unset) */
  GBytes *stdin_bytes;
  GInputStream *stdin_stream;
  guint timeout_s;
  guint guest_time_s;       /* under the warped clock */
  gboolean controls;
  AirlockPolicy *policy;
  char *bundle_dir;
  GBytes *key;
  char *bundle_gate;        /* the gate's set id its manifest names, or NULL */
  char *test_mode;
  guint64 clock_ns;
  OutputFunc output_func;
  gpointer output_data;
  gboolean shell;           /* the image's /bin/sh (or airlock's static shell), not its command */
  gboolean tty;             /* the workload's stdio is a terminal of tty_rows x tty_cols */
  guint16 tty_rows, tty_cols;
  EventFunc event_func;
  gpointer event_data;
  GPtrArray *serve;         /* Fixture *: what admitted names answer */
};

typedef struct {
  char *name;               /* lowercased, absolute: "pypi.org." */
  guint16 port;
  GBytes *response;
} Fixture;

struct _AirlockRun {
  AirlockSession *session;       /* borrowed */
  AirlockCase *c;                /* our copy */
  const AirlockGuestImage *guest;
  AirlockImageSource *source;
  AirlockImage *image;
  char *disk;
  GStrv argv;
  GPtrArray *envp;               /* char *, NULL-terminated */
  AirlockVm *vm;
  /* What the VM was made with, kept so a run whose host of a pool failed
   * before the guest booted can be made again on another (run.c). */
  AirlockVmOptions vm_opts;
  AirlockRunSpec spec;
  char *host;                    /* a pool's host it runs on (holding a slot), or NULL */
  gboolean host_held;
  char *host_failed;             /* a host that failed it first, and why, or NULL */
  AirlockVm *vm_failed;          /* that host's VM, kept until the run is freed */
  char *lost_attempt;            /* the bundle of a run whose host was lost mid-run, or NULL */
  char *retry_error;             /* why that run could not be made again elsewhere, or NULL */
  AirlockBundle *bundle;
  char *bundle_error;
  GThread *thread;
  gboolean vm_ok;
  GError *vm_error;
  gint64 started_real_us;

  int stdin_fd;                  /* our end of the stdin socket, or -1 */
  char *serve_dir;               /* the case's fixtures as files for the sinkhole, or NULL */
  GStrv serve;                   /* "NAME:PORT=FILE" for the VM */
  GInputStream *stdin_in;        /* the VM's end */

  GMutex lock;
  GCond cond;
  GByteArray *out;               /* stdout as it arrived */
  gsize out_read;                /* bytes read_line() handed out */
  gboolean out_held;             /* none handed out while a lost run's retry is decided */
  gboolean ended;
};

/* case.c: the copy of @c a run keeps (its policy through its text; the
 * stdin bytes or stream, the key and the fixtures' bytes by reference). */
AirlockCase *airlock_case_copy (const AirlockCase *c);

/* prepare.c: fills @run's argv, envp (NULL-terminated), disk and guest
 * image from its case, and writes its fixtures; FALSE with @error set
 * when the image, the guest image or a fixture cannot be had. */
gboolean airlock_run_prepare (AirlockRun *run, GError **error);

G_END_DECLS
