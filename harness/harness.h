/* The airlock command: one file per subcommand, dispatched from main.c. */
#pragma once

#include <airlock.h>

/* Exit statuses shared by every subcommand. */
enum {
  HARNESS_EXIT_OK = 0,
  HARNESS_EXIT_FAIL = 1,         /* the thing checked failed (verdict fail, boot failed) */
  HARNESS_EXIT_USAGE = 2,        /* bad command line */
  HARNESS_EXIT_INCONCLUSIVE = 3, /* evidence incomplete */
  HARNESS_EXIT_SETUP = 4,        /* environment not usable (images, QEMU, libvirt) */
};

typedef struct {
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
} HarnessCommand;

int cmd_boot (int argc, char **argv);
int cmd_doctor (int argc, char **argv);
int cmd_images (int argc, char **argv);
int cmd_run (int argc, char **argv);

/* Parses "amd64", "arm64", "all" or a comma list into @ret_arches
 * (TRUE per selected arch).  Returns FALSE with @error naming the bad word. */
gboolean harness_parse_arches (const char *spec, gboolean ret_arches[AIRLOCK_N_ARCHES],
                               GError **error);

/* An AirlockProgressFunc printing one updating line on stderr (a plain line
 * per stage when stderr is not a terminal). */
void harness_progress (const char *stage, guint64 done, guint64 total, gpointer user_data);
/* Ends the progress line, if one is open. */
void harness_progress_done (void);
