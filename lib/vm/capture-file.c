#include "config.h"

#include "vm/capture-file-private.h"

#include <errno.h>
#include <gio/gio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

/* "+UID:+GID" (libvirt writes numeric labels with '+'; a name would need
 * a lookup in the daemon's user database, which need not be ours). */
static gboolean
parse_label (const char *label, guint32 *ret_uid, guint32 *ret_gid)
{
  guint64 uid, gid;
  char *end;

  if (label[0] != '+' || !g_ascii_isdigit (label[1]))
    return FALSE;
  uid = g_ascii_strtoull (label + 1, &end, 10);
  if (end[0] != ':' || end[1] != '+' || !g_ascii_isdigit (end[2]) || uid > G_MAXUINT32)
    return FALSE;
  gid = g_ascii_strtoull (end + 2, &end, 10);
  if (*end != '<' || gid > G_MAXUINT32)
    return FALSE;
  *ret_uid = (guint32) uid;
  *ret_gid = (guint32) gid;
  return TRUE;
}

gboolean
airlock_capture_qemu_user (const char *caps_xml, const char *virt_type, guint32 *ret_uid,
                           guint32 *ret_gid)
{
  g_autofree char *open_tag = g_strdup_printf ("<baselabel type='%s'>", virt_type);
  const char *model = caps_xml;

  /* Each <secmodel> names its model first; the DAC one holds uid:gid. */
  while ((model = strstr (model, "<secmodel>")))
    {
      const char *end = strstr (model, "</secmodel>");
      const char *dac = strstr (model, "<model>dac</model>");
      const char *label;

      if (!end)
        return FALSE;
      if (dac && dac < end && (label = strstr (model, open_tag)) && label < end)
        return parse_label (label + strlen (open_tag), ret_uid, ret_gid);
      model = end;
    }
  return FALSE;
}

AirlockCaptureAccess
airlock_capture_access_for (uid_t euid, guint32 qemu_uid)
{
  if ((guint32) euid == qemu_uid)
    return AIRLOCK_CAPTURE_ACCESS_OWN;
  if (euid == 0)
    return AIRLOCK_CAPTURE_ACCESS_CHOWN;
  return AIRLOCK_CAPTURE_ACCESS_ACL;
}

/* The kernel's POSIX ACL xattr format (linux/posix_acl_xattr.h), little
 * endian: a version, then entries sorted by tag, then by id.  Written here
 * rather than through libacl's acl_set_fd(): the ACL is five fixed entries
 * set once per run in the non-root case only, and the kernel's format is a
 * stable ABI, so a library (and a build dependency for every user) would
 * buy nothing; tests/unit/test-vm.c checks the bytes a real file gets. */
#define ACL_XATTR_VERSION 2
#define ACL_TAG_USER_OBJ 0x01
#define ACL_TAG_USER 0x02
#define ACL_TAG_GROUP_OBJ 0x04
#define ACL_TAG_MASK 0x10
#define ACL_TAG_OTHER 0x20
#define ACL_RW 6
#define ACL_NO_ID 0xffffffffu

typedef struct {
  guint16 tag;
  guint16 perm;
  guint32 id;
} AclEntry;

/* user::rw-, user:QEMU:rw-, group::---, mask::rw-, other::---. */
static gboolean
set_acl (int fd, guint32 qemu_uid)
{
  const AclEntry entries[] = {
    { ACL_TAG_USER_OBJ, ACL_RW, ACL_NO_ID },
    { ACL_TAG_USER, ACL_RW, qemu_uid },
    { ACL_TAG_GROUP_OBJ, 0, ACL_NO_ID },
    { ACL_TAG_MASK, ACL_RW, ACL_NO_ID },
    { ACL_TAG_OTHER, 0, ACL_NO_ID },
  };
  guint8 buf[4 + G_N_ELEMENTS (entries) * 8];
  guint32 v = GUINT32_TO_LE (ACL_XATTR_VERSION);

  memcpy (buf, &v, 4);
  for (guint i = 0; i < G_N_ELEMENTS (entries); i++)
    {
      guint16 tag = GUINT16_TO_LE (entries[i].tag), perm = GUINT16_TO_LE (entries[i].perm);
      guint32 id = GUINT32_TO_LE (entries[i].id);

      memcpy (buf + 4 + i * 8, &tag, 2);
      memcpy (buf + 4 + i * 8 + 2, &perm, 2);
      memcpy (buf + 4 + i * 8 + 4, &id, 4);
    }
  return fsetxattr (fd, "system.posix_acl_access", buf, sizeof buf, 0) == 0;
}

gboolean
airlock_capture_file_grant (int fd, const char *path, guint32 qemu_uid, guint32 qemu_gid,
                            GError **error)
{
  AirlockCaptureAccess access = airlock_capture_access_for (geteuid (), qemu_uid);
  gboolean ok;

  if (fchmod (fd, 0600) < 0)
    ok = FALSE;
  else if (access == AIRLOCK_CAPTURE_ACCESS_CHOWN)
    ok = fchown (fd, qemu_uid, qemu_gid) == 0;
  else if (access == AIRLOCK_CAPTURE_ACCESS_ACL)
    ok = set_acl (fd, qemu_uid);
  else
    ok = TRUE;
  if (!ok)
    {
      int saved = errno;

      g_set_error (error, G_IO_ERROR, g_io_error_from_errno (saved),
                   "cannot make the capture file '%s' writable by QEMU's user (uid %u) alone: %s%s",
                   path, qemu_uid, g_strerror (saved),
                   access == AIRLOCK_CAPTURE_ACCESS_ACL
                     ? " (a run through a system daemon, not as root, needs a file system with "
                       "POSIX ACLs for its runtime directory)"
                     : "");
      return FALSE;
    }
  return TRUE;
}
