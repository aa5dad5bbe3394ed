/* modules.list, modules.dep and their closure (modules-private.h).  The
 * dependency table is parsed here from `depmod -n`'s text, not resolved
 * with libkmod, for reasons measured (house issue, December 2026):
 *
 * - libkmod is not in the build: `kmod` is required as a program (depmod),
 *   and `pkg-config libkmod` finds nothing here (no libkmod-dev).
 * - libkmod looks modules up in the binary indexes of the modules
 *   directory (modules.dep.bin, …), which a kernel package does not ship:
 *   the pinned linux-image-6.1.0-50-amd64 has 4022 modules and no
 *   modules.dep of either kind (its postinst runs depmod).  Using libkmod
 *   means depmod writing its index files (10 in this host's own tree:
 *   modules.dep, .alias, .symbols, … and their .bin) into the tree first,
 *   and for --modules that tree is the user's directory, which airlock
 *   promises to leave untouched (kernel-stage.c links to it from a root of
 *   its own and runs `depmod -n`, which writes nothing).
 * - What libkmod would replace is the parser, airlock_module_dep_parse()
 *   (56 lines); the closure's load order, the built-in and optional
 *   modules and modules.dep for the closure are ours either way. */
#include "config.h"

#include "guestimg/modules-private.h"

#include "guestimg/guest-image.h"

#include <string.h>

typedef struct {
  char *path;
  GStrv deps;   /* as listed: the last one is loaded first */
} ModuleDepEntry;

struct _AirlockModuleDep {
  GPtrArray *entries;     /* ModuleDepEntry, in file order (owning) */
  GHashTable *by_path;    /* path → ModuleDepEntry */
  GHashTable *by_name;    /* name → ModuleDepEntry (first of a name wins) */
};

void
airlock_module_request_free (AirlockModuleRequest *request)
{
  if (!request)
    return;
  g_free (request->name);
  g_free (request);
}

static gboolean
module_name_is_valid (const char *name)
{
  if (*name == '\0')
    return FALSE;
  for (const char *p = name; *p; p++)
    if (!g_ascii_isalnum (*p) && *p != '_' && *p != '-')
      return FALSE;
  return TRUE;
}

/* modprobe treats '-' and '_' in module names as the same character. */
static char *
module_name_normalise (const char *name, gssize len)
{
  char *n = len < 0 ? g_strdup (name) : g_strndup (name, len);

  g_strdelimit (n, "-", '_');
  return n;
}

GPtrArray *
airlock_modules_list_parse (const char *text, const char *origin, GError **error)
{
  g_autoptr (GPtrArray) requests =
    g_ptr_array_new_with_free_func ((GDestroyNotify) airlock_module_request_free);
  g_autoptr (GHashTable) seen = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      char *line = lines[i];
      char *hash = strchr (line, '#');
      AirlockModuleRequest *request;
      gsize len;
      gboolean optional = FALSE;
      g_autofree char *name = NULL;

      if (hash)
        *hash = '\0';
      g_strstrip (line);
      if (*line == '\0')
        continue;
      len = strlen (line);
      if (line[len - 1] == '?')
        {
          optional = TRUE;
          line[--len] = '\0';
        }
      if (!module_name_is_valid (line))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                       "invalid module list '%s': line %u: '%s' is not a module name "
                       "(letters, digits, '_' and '-', optionally followed by '?')",
                       origin, i + 1, lines[i]);
          return NULL;
        }
      name = module_name_normalise (line, -1);
      if (g_hash_table_contains (seen, name))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_RECIPE,
                       "invalid module list '%s': line %u: module '%s' is listed twice",
                       origin, i + 1, name);
          return NULL;
        }
      g_hash_table_add (seen, g_strdup (name));
      request = g_new0 (AirlockModuleRequest, 1);
      request->name = g_steal_pointer (&name);
      request->optional = optional;
      g_ptr_array_add (requests, request);
    }
  return g_steal_pointer (&requests);
}

/* include/linux/module_signature.h: the marker ends the file; before it,
 * struct module_signature (12 bytes, sig_len big-endian at offset 8); before
 * that, sig_len bytes of signature. */
#define MODULE_SIG_MARKER "~Module signature appended~\n"
#define MODULE_SIG_INFO_SIZE 12

GBytes *
airlock_module_strip_signature (GBytes *ko, const char *what, GError **error)
{
  gsize len;
  const guint8 *data = g_bytes_get_data (ko, &len);
  gsize marker_len = strlen (MODULE_SIG_MARKER);
  const guint8 *info;
  guint32 sig_len;

  if (len < marker_len + MODULE_SIG_INFO_SIZE
      || memcmp (data + len - marker_len, MODULE_SIG_MARKER, marker_len) != 0)
    return g_bytes_ref (ko);
  info = data + len - marker_len - MODULE_SIG_INFO_SIZE;
  sig_len = ((guint32) info[8] << 24) | ((guint32) info[9] << 16) | ((guint32) info[10] << 8)
            | (guint32) info[11];
  if (sig_len > len - marker_len - MODULE_SIG_INFO_SIZE)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot use %s: its signature trailer claims %u bytes of signature, more "
                   "than the %" G_GSIZE_FORMAT " bytes before it", what, sig_len,
                   len - marker_len - MODULE_SIG_INFO_SIZE);
      return NULL;
    }
  return g_bytes_new_from_bytes (ko, 0, len - marker_len - MODULE_SIG_INFO_SIZE - sig_len);
}

char *
airlock_module_name_from_path (const char *path)
{
  static const char *const suffixes[] = { ".ko", ".ko.xz", ".ko.gz", ".ko.zst" };
  const char *base = strrchr (path, '/');

  base = base ? base + 1 : path;
  for (guint i = 0; i < G_N_ELEMENTS (suffixes); i++)
    if (g_str_has_suffix (base, suffixes[i]) && strlen (base) > strlen (suffixes[i]))
      return module_name_normalise (base, strlen (base) - strlen (suffixes[i]));
  return NULL;
}

/* Module paths become paths inside the initramfs and are opened on the
 * host: they must stay inside the modules directory. */
static gboolean
module_path_is_safe (const char *path)
{
  g_auto (GStrv) parts = NULL;

  if (*path == '\0' || *path == '/')
    return FALSE;
  parts = g_strsplit (path, "/", -1);
  for (guint i = 0; parts[i]; i++)
    if (*parts[i] == '\0' || g_str_equal (parts[i], ".") || g_str_equal (parts[i], ".."))
      return FALSE;
  return TRUE;
}

static void
module_dep_entry_free (gpointer p)
{
  ModuleDepEntry *e = p;

  g_free (e->path);
  g_strfreev (e->deps);
  g_free (e);
}

void
airlock_module_dep_free (AirlockModuleDep *dep)
{
  if (!dep)
    return;
  g_hash_table_unref (dep->by_name);
  g_hash_table_unref (dep->by_path);
  g_ptr_array_unref (dep->entries);
  g_free (dep);
}

/* Whitespace-separated words, runs of blanks included. */
static GStrv
split_words (const char *text)
{
  g_auto (GStrv) parts = g_strsplit_set (text, " \t", -1);
  g_autoptr (GStrvBuilder) words = g_strv_builder_new ();

  for (guint i = 0; parts[i]; i++)
    if (*parts[i] != '\0')
      g_strv_builder_add (words, parts[i]);
  return g_strv_builder_end (words);
}

static gboolean
check_module_path (const char *path, const char *origin, guint lineno, GError **error)
{
  g_autofree char *name = NULL;

  if (!module_path_is_safe (path))
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "invalid modules.dep '%s': line %u: module path '%s' is not relative "
                   "to the modules directory", origin, lineno, path);
      return FALSE;
    }
  name = airlock_module_name_from_path (path);
  if (!name)
    {
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "invalid modules.dep '%s': line %u: '%s' is not a module file "
                   "(.ko, .ko.xz, .ko.gz or .ko.zst)", origin, lineno, path);
      return FALSE;
    }
  return TRUE;
}

AirlockModuleDep *
airlock_module_dep_parse (const char *text, const char *origin, GError **error)
{
  g_autoptr (AirlockModuleDep) dep = g_new0 (AirlockModuleDep, 1);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  dep->entries = g_ptr_array_new_with_free_func (module_dep_entry_free);
  dep->by_path = g_hash_table_new (g_str_hash, g_str_equal);
  dep->by_name = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);

  for (guint i = 0; lines[i]; i++)
    {
      char *line = g_strstrip (lines[i]);
      char *colon;
      ModuleDepEntry *e;
      g_autofree char *name = NULL;

      if (*line == '\0')
        continue;
      if (*line == '#')
        break;
      colon = strchr (line, ':');
      if (!colon)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                       "invalid modules.dep '%s': line %u: no ':' after the module path",
                       origin, i + 1);
          return NULL;
        }
      *colon = '\0';
      g_strstrip (line);
      if (!check_module_path (line, origin, i + 1, error))
        return NULL;
      if (g_hash_table_contains (dep->by_path, line))
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                       "invalid modules.dep '%s': line %u: '%s' has a second entry",
                       origin, i + 1, line);
          return NULL;
        }
      e = g_new0 (ModuleDepEntry, 1);
      e->path = g_strdup (line);
      e->deps = split_words (colon + 1);
      g_ptr_array_add (dep->entries, e);
      g_hash_table_insert (dep->by_path, e->path, e);
      for (guint j = 0; e->deps[j]; j++)
        if (!check_module_path (e->deps[j], origin, i + 1, error))
          return NULL;

      name = airlock_module_name_from_path (e->path);
      if (!g_hash_table_contains (dep->by_name, name))
        g_hash_table_insert (dep->by_name, g_steal_pointer (&name), e);
    }
  return g_steal_pointer (&dep);
}

GHashTable *
airlock_modules_builtin_parse (const char *text)
{
  GHashTable *names = g_hash_table_new_full (g_str_hash, g_str_equal, g_free, NULL);
  g_auto (GStrv) lines = g_strsplit (text, "\n", -1);

  for (guint i = 0; lines[i]; i++)
    {
      char *name = airlock_module_name_from_path (g_strstrip (lines[i]));

      if (name)
        g_hash_table_add (names, name);
    }
  return names;
}

void
airlock_module_closure_free (AirlockModuleClosure *closure)
{
  if (!closure)
    return;
  g_clear_pointer (&closure->load_order, g_ptr_array_unref);
  g_clear_pointer (&closure->builtin, g_ptr_array_unref);
  g_clear_pointer (&closure->absent_optional, g_ptr_array_unref);
  g_free (closure);
}

enum { VISITING = 1, DONE = 2 };

typedef struct {
  AirlockModuleDep *dep;
  GHashTable *state;    /* path → VISITING / DONE */
  GPtrArray *stack;     /* paths being visited, outermost first */
  GPtrArray *order;
  const char *release;
} ClosureWalk;

static gboolean
visit (ClosureWalk *walk, ModuleDepEntry *e, GError **error)
{
  guint state = GPOINTER_TO_UINT (g_hash_table_lookup (walk->state, e->path));
  guint n_deps;

  if (state == DONE)
    return TRUE;
  if (state == VISITING)
    {
      g_autoptr (GString) cycle = g_string_new (NULL);
      guint start = 0;

      while (start < walk->stack->len && !g_str_equal (walk->stack->pdata[start], e->path))
        start++;
      for (guint i = start; i < walk->stack->len; i++)
        g_string_append_printf (cycle, "%s → ", (char *) walk->stack->pdata[i]);
      g_string_append (cycle, e->path);
      g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                   "cannot order the modules of kernel '%s': their dependencies form a cycle (%s)",
                   walk->release, cycle->str);
      return FALSE;
    }

  g_hash_table_insert (walk->state, e->path, GUINT_TO_POINTER (VISITING));
  g_ptr_array_add (walk->stack, e->path);
  n_deps = g_strv_length (e->deps);
  /* modules.dep lists a module's dependencies (all of them, transitively)
   * with the one to load first at the end, as modprobe reads it. */
  for (guint i = n_deps; i-- > 0;)
    {
      ModuleDepEntry *d = g_hash_table_lookup (walk->dep->by_path, e->deps[i]);

      if (!d)
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                       "cannot resolve the modules of kernel '%s': '%s' depends on '%s', "
                       "which modules.dep does not list", walk->release, e->path, e->deps[i]);
          return FALSE;
        }
      if (!visit (walk, d, error))
        return FALSE;
    }
  g_ptr_array_remove_index (walk->stack, walk->stack->len - 1);
  g_hash_table_insert (walk->state, e->path, GUINT_TO_POINTER (DONE));
  g_ptr_array_add (walk->order, g_strdup (e->path));
  return TRUE;
}

AirlockModuleClosure *
airlock_modules_closure (AirlockModuleDep *dep, GHashTable *builtin, GPtrArray *requests,
                         const char *release, GError **error)
{
  g_autoptr (AirlockModuleClosure) closure = g_new0 (AirlockModuleClosure, 1);
  g_autoptr (GHashTable) state = g_hash_table_new (g_str_hash, g_str_equal);
  g_autoptr (GPtrArray) stack = g_ptr_array_new ();
  ClosureWalk walk = { dep, state, stack, NULL, release };

  closure->load_order = g_ptr_array_new_with_free_func (g_free);
  closure->builtin = g_ptr_array_new_with_free_func (g_free);
  closure->absent_optional = g_ptr_array_new_with_free_func (g_free);
  walk.order = closure->load_order;

  for (guint i = 0; i < requests->len; i++)
    {
      AirlockModuleRequest *request = requests->pdata[i];
      ModuleDepEntry *e = g_hash_table_lookup (dep->by_name, request->name);

      if (e)
        {
          if (!visit (&walk, e, error))
            return NULL;
        }
      else if (builtin && g_hash_table_contains (builtin, request->name))
        g_ptr_array_add (closure->builtin, g_strdup (request->name));
      else if (request->optional)
        g_ptr_array_add (closure->absent_optional, g_strdup (request->name));
      else
        {
          g_set_error (error, AIRLOCK_GUEST_IMAGE_ERROR, AIRLOCK_GUEST_IMAGE_ERROR_MODULES,
                       "kernel '%s' has no module '%s' and does not have it built in; "
                       "airlock's guest needs it (modules.list)", release, request->name);
          return NULL;
        }
    }
  return g_steal_pointer (&closure);
}

char *
airlock_module_dep_format (AirlockModuleDep *dep, GPtrArray *paths,
                           char *(*rename) (const char *path))
{
  g_autoptr (GString) text = g_string_new (NULL);

  for (guint i = 0; i < paths->len; i++)
    {
      ModuleDepEntry *e = g_hash_table_lookup (dep->by_path, paths->pdata[i]);
      g_autofree char *path = NULL;

      g_return_val_if_fail (e != NULL, NULL);
      path = rename ? rename (e->path) : g_strdup (e->path);
      g_string_append_printf (text, "%s:", path);
      for (guint j = 0; e->deps[j]; j++)
        {
          g_autofree char *d = rename ? rename (e->deps[j]) : g_strdup (e->deps[j]);
          g_string_append_printf (text, " %s", d);
        }
      g_string_append_c (text, '\n');
    }
  return g_string_free (g_steal_pointer (&text), FALSE);
}
