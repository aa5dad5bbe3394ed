#include "config.h"

#include "vm/capture-file-private.h"

#include <string.h>

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
