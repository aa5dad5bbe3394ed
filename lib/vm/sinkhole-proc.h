/* Starting and collecting the airlock-sinkhole process that serves one
 * run's network (sinkhole/).  Internal to lib/vm. */
#pragma once

#include "airlock-macros.h"

G_BEGIN_DECLS

typedef struct _AirlockSinkholeProc AirlockSinkholeProc;

/* The program: $AIRLOCK_SINKHOLE, else libexecdir/airlock/airlock-sinkhole. */
const char *airlock_sinkhole_program (void);

/* Starts the process in @dir (which must exist and be ours): it makes
 * @dir/net.sock (given to @owner_uid:@owner_gid when @give_socket),
 * @dir/net.pcap and @dir/sinkhole.jsonl, and is ready for QEMU when this
 * returns.  @serve: NAME:PORT=FILE fixtures, or NULL. */
AirlockSinkholeProc *airlock_sinkhole_proc_start (const char *dir, gboolean give_socket,
                                                  guint32 owner_uid, guint32 owner_gid,
                                                  const char *const *serve, GError **error);

const char *airlock_sinkhole_proc_socket (AirlockSinkholeProc *proc);
const char *airlock_sinkhole_proc_pcap (AirlockSinkholeProc *proc);

/* Once QEMU is gone: waits (bounded) for the process to write its last
 * records, then reads them.  Returns the record file (NULL with
 * @ret_error set to a sentence when there is none whole), and always
 * stops the process. */
GBytes *airlock_sinkhole_proc_finish (AirlockSinkholeProc *proc, char **ret_error);

void airlock_sinkhole_proc_free (AirlockSinkholeProc *proc);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (AirlockSinkholeProc, airlock_sinkhole_proc_free)

G_END_DECLS
