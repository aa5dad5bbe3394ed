/* The airlock command: one file per subcommand (cmd-NAME.c, its cmd_NAME()
 * in main.c's table), and the helpers they share, in cli-common.c. */
#pragma once

#include <airlock.h>
#include <stdarg.h>
#include <stdio.h>

/* Exit statuses shared by every subcommand. */
enum {
  HARNESS_EXIT_OK = 0,
  HARNESS_EXIT_FAIL = 1,         /* the thing checked failed (verdict fail, boot failed) */
  HARNESS_EXIT_USAGE = 2,        /* bad command line */
  HARNESS_EXIT_INCONCLUSIVE = 3, /* evidence incomplete */
  HARNESS_EXIT_SETUP = 4,        /* environment not usable (images, QEMU, libvirt) */
  HARNESS_EXIT_REPLAY_INPUT = 5, /* replay: a pinned input is missing or changed */
  /* The container image given is unusable: one status per
   * AIRLOCK_IMAGE_ERROR code (harness_exit_for_image_error). */
  HARNESS_EXIT_IMAGE_REFERENCE = 10,   /* the reference does not parse or names nothing */
  HARNESS_EXIT_IMAGE_NOT_FOUND = 11,   /* a blob, tag or file it names is missing */
  HARNESS_EXIT_IMAGE_DIGEST = 12,      /* a blob does not match its digest or size */
  HARNESS_EXIT_IMAGE_MALFORMED = 13,   /* JSON, tar or compression that does not parse */
  HARNESS_EXIT_IMAGE_UNSUPPORTED = 14, /* a media type, digest algorithm or platform not taken */
  HARNESS_EXIT_IMAGE_NO_ARCH = 15,     /* no manifest for the requested arch */
  HARNESS_EXIT_IMAGE_UNSAFE = 16,      /* a layer entry escapes the root */
  HARNESS_EXIT_IMAGE_LIMIT = 17,       /* more layers, bytes or entries than allowed */
  HARNESS_EXIT_IMAGE_DISK = 18,        /* building the rootfs disk failed */
  HARNESS_EXIT_IMAGE_USER = 19,        /* the image's User is not in its /etc files */
  HARNESS_EXIT_IMAGE_NO_COMMAND = 20,  /* no Entrypoint, Cmd or arguments */
};

/* One subcommand: main.c's table maps its name to its cmd_NAME(). */
typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} HarnessCommand;

int cmd_boot (int argc, char **argv);
int cmd_doctor (int argc, char **argv);
int cmd_images (int argc, char **argv);
int cmd_run (int argc, char **argv);
int cmd_gate (int argc, char **argv);
int cmd_verify (int argc, char **argv);
int cmd_shell (int argc, char **argv);
int cmd_show (int argc, char **argv);
int cmd_replay (int argc, char **argv);
int cmd_policy (int argc, char **argv);

/* ---- serve.c ---- */

/* Adds --serve NAME:PORT=FILE fixtures to @c (harness/serve.c), and when
 * @ret_lines is not NULL appends each one's manifest line to it
 * (airlock_case_fixture_line()).  FALSE with @error naming the option's
 * value and what is wrong with it. */
gboolean harness_apply_serve (AirlockCase *c, const char *const *specs, GPtrArray *ret_lines,
                              GError **error);

#define HARNESS_SERVE_HELP \
  "what NAME answers on PORT in the sinkhole network: FILE's bytes, raw or an HTTP response (repeatable)"

/* ---- cli-common.c ---- */

/* --guest-time's value before its option is parsed: any number the user
 * can give (a negative one too) is a value to check. */
#define HARNESS_GUEST_TIME_UNSET G_MININT

/* The --clock and --guest-time options of @command ("airlock run"):
 * @name NULL keeps @ret_clock (the command's default), @guest_time_s
 * HARNESS_GUEST_TIME_UNSET is no --guest-time.  Prints the usage error and
 * returns FALSE for an unknown clock, a --guest-time outside 1 …
 * @max_guest_time_s or given with the real clock, and the warped clock with
 * --accel kvm (QEMU warps only what it emulates). */
gboolean harness_parse_clock (const char *command, const char *name, AirlockAccel accel,
                              int guest_time_s, int max_guest_time_s, AirlockClock *ret_clock);

/* Where a command prints its text: the process's stdout and stderr, or
 * the buffers the calling thread was given (a gate over several images
 * runs them at once, each in a thread whose output is printed whole when
 * it ends; NULL, NULL: the process's again).  Output a library thread
 * hands back (the workload's, live) goes to the process's streams. */
/* Prints "@command: MESSAGE" on harness_err() and keeps MESSAGE in
 * @errors (char *, for a --json summary's "errors").  Returns MESSAGE,
 * owned by @errors. */
const char *harness_keep_error (GPtrArray *errors, const char *command, const char *format,
                                va_list ap) G_GNUC_PRINTF (3, 0);
FILE *harness_out (void);
FILE *harness_err (void);
void harness_set_thread_output (FILE *out, FILE *err);

/* An AirlockProgressFunc printing one updating line on stderr (a plain line
 * per stage when stderr is not a terminal). */
void harness_progress (const char *stage, guint64 done, guint64 total, gpointer user_data);
/* Ends the progress line, if one is open. */
void harness_progress_done (void);

/* The exit status for an error: the HARNESS_EXIT_IMAGE_* status of an
 * AIRLOCK_IMAGE_ERROR, HARNESS_EXIT_SETUP for anything else. */
int harness_exit_for_image_error (const GError *error);

/* Whether the image of @source resolves on @arch (its manifest and config
 * read and checked) to a command to run (@args replacing its Cmd, or NULL):
 * what run and gate check of every image and arch before any boot.  FALSE
 * with @error (an AIRLOCK_IMAGE_ERROR) otherwise. */
gboolean harness_image_runs_on (AirlockImageSource *source, AirlockArch arch,
                                const char *const *args, GError **error);

/* One JSON object on one line of stdout, flushed (--json: JSON Lines,
 * docs/json.md). */
void harness_print_json_line (JsonBuilder *b);

/* Whether @dir is an evidence bundle (it has manifest.json, or is marked
 * INCOMPLETE) rather than a directory of ARCH/ bundles. */
gboolean harness_is_bundle (const char *dir);

/* Parses "amd64", "arm64", "all" or a comma list into @ret_arches
 * (TRUE per selected arch).  Returns FALSE with @error naming the bad word. */
gboolean harness_parse_arches (const char *spec, gboolean ret_arches[AIRLOCK_N_ARCHES],
                               GError **error);
