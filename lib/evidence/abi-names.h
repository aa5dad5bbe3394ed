/* The Linux ABI's numbers that the supervisor's records carry, named:
 * system calls per ABI (from the kernel's tables), errnos, signals and
 * wait statuses.  Pure lookups (abi-names.c).  Public (in <airlock.h>)
 * with event.h, which includes it for its users. */
#pragma once

#if !defined(AIRLOCK_INSIDE) && !defined(AIRLOCK_COMPILATION)
#error "Only <airlock.h> can be included directly."
#endif

#include "../airlock-macros.h"

G_BEGIN_DECLS

/* "ECONNREFUSED" for -111, "errno-N" for an unknown one, the decimal value
 * for a value >= 0.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_result_to_string (gint64 result);

/* "exited 0", "killed by SIGKILL", "killed by signal 40 (core dumped)"…
 * Transfer full. */
AIRLOCK_PUBLIC char *airlock_wait_status_to_string (guint32 status);

/* "x86_64", "x32", "i386", "aarch64", "arm" or "unknown" for the ABI of a
 * call made with @audit_arch and @nr (static). */
AIRLOCK_PUBLIC const char *airlock_syscall_abi (guint32 audit_arch, guint32 nr);
/* The call's name under that ABI, "syscall-N" when unknown.  Transfer full. */
AIRLOCK_PUBLIC char *airlock_syscall_name (guint32 audit_arch, guint32 nr);

/* The call's name from the tables (static), or NULL when it is not in
 * them: the event log keeps the static names without a copy. */
AIRLOCK_PUBLIC const char *airlock_syscall_known_name (guint32 audit_arch, guint32 nr);
/* "syscall-N" for a call the tables do not name (for x32, N within the x32
 * table).  Transfer full. */
AIRLOCK_PUBLIC char *airlock_syscall_unknown_name (guint32 audit_arch, guint32 nr);

G_END_DECLS
