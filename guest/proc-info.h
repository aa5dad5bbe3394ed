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
/* Process @tgid's exe, its name and its inode read through one open of
 * /proc/TGID/exe, so both are of the same file (an exec cannot fall
 * between them), into @pi's exe and exe_ino. */
void read_proc_exe (uint32_t tgid, struct proc_info *pi);
/* What read_proc_info() last read of process @tgid's exe and argv, kept
 * for a record read after the process exited or exec'd (hooks.c), when
 * its exe was inode @ino; false when nothing of that binary is kept.
 * Only the supervisor's main loop thread calls this. */
bool proc_memo_recall (uint32_t tgid, uint64_t ino, struct proc_info *pi);

#endif /* AIRLOCK_GUEST_PROC_INFO_H */
