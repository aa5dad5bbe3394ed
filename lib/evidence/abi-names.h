/* The Linux ABI's numbers that the supervisor's records carry, named:
 * system calls per ABI (from the kernel's tables), errnos, signals and
 * wait statuses.  Pure lookups (abi-names.c).  Internal to libairlock like
 * event.h, which includes this header for its users. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/* "ECONNREFUSED" for -111, "errno-N" for an unknown one, the decimal value
 * for a value >= 0.  Transfer full. */
char *airlock_result_to_string (gint64 result);

/* "exited 0", "killed by SIGKILL", "killed by signal 40 (core dumped)"…
 * Transfer full. */
char *airlock_wait_status_to_string (guint32 status);

/* "x86_64", "x32", "i386", "aarch64", "arm" or "unknown" for the ABI of a
 * call made with @audit_arch and @nr (static). */
const char *airlock_syscall_abi (guint32 audit_arch, guint32 nr);
/* The call's name under that ABI, "syscall-N" when unknown.  Transfer full. */
char *airlock_syscall_name (guint32 audit_arch, guint32 nr);

/* The call's name from the tables (static), or NULL when it is not in
 * them: the event log keeps the static names without a copy. */
const char *airlock_syscall_known_name (guint32 audit_arch, guint32 nr);
/* "syscall-N" for a call the tables do not name (for x32, N within the x32
 * table).  Transfer full. */
char *airlock_syscall_unknown_name (guint32 audit_arch, guint32 nr);

G_END_DECLS
