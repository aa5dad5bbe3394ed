/* What our own command and tests reach beyond the public case API. */
#pragma once

#include "case/case.h"
#include "gate/verdict.h"
#include "image/image.h"
#include "net/flows.h"
#include "record/run-record.h"

G_BEGIN_DECLS

/* Tests only: airlock.test=MODE for the guest init (guest/cmdline.c, guest/test-modes.c). */
void airlock_case_set_test_mode (AirlockCase *c, const char *mode);
/* The guest's CLOCK_REALTIME before anything runs (ns since the epoch;
 * 0: QEMU's RTC, the host's time): `airlock replay` gives the recorded
 * run's start. */
void airlock_case_set_clock (AirlockCase *c, guint64 clock_ns);
/* Instead of an image: /bin/NAME of the guest test programs' root
 * (tests/guest, `airlock run --guest-program`), as root, cwd /, a fixed
 * PATH and HOME; the case's args follow NAME. */
void airlock_case_set_guest_program (AirlockCase *c, const char *name);
/* Called with every chunk of the workload's stdout (1) or stderr (2) as it
 * arrives, from a reader thread (`airlock run --stdin -` prints it live). */
void airlock_case_set_output_func (AirlockCase *c,
                                   void (*func) (int stream, const guint8 *data, gsize len,
                                                 gpointer user_data),
                                   gpointer user_data);
/* `airlock shell`: instead of the image's entrypoint and Cmd, its
 * /bin/sh, with the image's env, cwd and user; when the image has no
 * executable /bin/sh, airlock's static shell, bound read-only at
 * /.airlock/bin/sh (the guest decides in the image's root and logs which;
 * the shell's execve record names it).  The run boots the guest image's
 * shell variant (built once per arch: a pinned busybox-static). */
void airlock_case_set_shell (AirlockCase *c, gboolean shell);
/* With @tty the workload's stdio is a pseudo-terminal of @rows x @cols
 * (0: unknown), its controlling terminal, instead of pipes: one output
 * stream (stdout), line editing and ^C in the guest's line discipline.
 * Resize it with airlock_vm_send_winsize() on airlock_run_get_vm(). */
void airlock_case_set_tty (AirlockCase *c, gboolean tty, guint16 rows, guint16 cols);
/* Called for every supervisor record as its frame is accepted
 * (AirlockVmOptions.event_func: the evidence thread, the VM's lock held,
 * quick, no calls into the VM); `airlock shell` prints each attempt live. */
void airlock_case_set_event_func (AirlockCase *c,
                                  void (*func) (const AirlockEvent *event,
                                                const AirlockEvent *call, gpointer user_data),
                                  gpointer user_data);
/* Replaces the case's policy with a copy of @policy. */
void airlock_case_set_policy (AirlockCase *c, const AirlockPolicy *policy);
const char *airlock_case_get_image_ref (const AirlockCase *c);

/* The session's guest image (kernel, initramfs and their digests). */
const AirlockGuestImage *airlock_session_get_guest_image (AirlockSession *session);

/* The running VM (for its swept domains, accelerator notice, URI). */
AirlockVm *airlock_run_get_vm (AirlockRun *run);
/* The image resolved for the run's arch, or NULL for a guest program. */
const AirlockImage *airlock_run_get_image (AirlockRun *run);
/* What the supervisor is asked to run (argv[0] is the program). */
const char *const *airlock_run_get_argv (AirlockRun *run);

/* The verdict in full, the capture (or NULL), the run record, the image
 * (or NULL).  Owned by the result. */
const AirlockVerdict *airlock_result_get_verdict_details (AirlockResult *result);
AirlockCapture *airlock_result_get_capture (AirlockResult *result);
const AirlockRunRecord *airlock_result_get_record (AirlockResult *result);
const AirlockImage *airlock_result_get_image (AirlockResult *result);

/* result.c: the result of a finished run (takes @verdict, @record,
 * @image).  No AirlockVm: the record is the run. */
AirlockResult *airlock_result_new (AirlockArch arch, const char *case_name, AirlockImage *image,
                                   AirlockVerdict *verdict, AirlockRunRecord *record);
void airlock_result_set_bundle (AirlockResult *result, const char *dir, const char *error);

G_END_DECLS
