/* Who a process is (proc-info.c). */
#ifndef AIRLOCK_GUEST_PROC_INFO_H
#define AIRLOCK_GUEST_PROC_INFO_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "record.h"

/* The first @size bytes of the file at @path (bytes read, or -errno). */
ssize_t read_prefix (const char *path, char *buf, size_t size);
/* Thread @tid's ids, exe and argv; pi->ok false when it is gone. */
void read_proc_info (pid_t tid, struct proc_info *pi);
/* What read_proc_info() last read of process @tgid's exe and argv, kept
 * for a record read after the process exited (hooks.c); execve forgets
 * (calls.c).  Only the supervisor's main loop thread calls these. */
bool proc_memo_recall (uint32_t tgid, struct proc_info *pi);
void proc_memo_forget (uint32_t tgid);

#endif /* AIRLOCK_GUEST_PROC_INFO_H */
