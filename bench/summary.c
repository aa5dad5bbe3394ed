#include "summary.h"

#include <errno.h>
#include <fcntl.h>
#include <json-glib/json-glib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void
add_number (JsonBuilder *b, const char *name, double x)
{
  json_builder_set_member_name (b, name);
  json_builder_add_double_value (b, x);
}

void
bench_summary_add (const BenchSummaryRow *row)
{
  const char *path = g_getenv ("AIRLOCK_BENCH_SUMMARY");
  g_autoptr (JsonBuilder) b = NULL;
  g_autoptr (JsonGenerator) gen = NULL;
  g_autoptr (JsonNode) root = NULL;
  g_autofree char *line = NULL;
  g_autofree char *text = NULL;
  gsize len;
  int fd;

  if (!path || !*path)
    return;
  b = json_builder_new ();
  json_builder_begin_object (b);
  json_builder_set_member_name (b, "bench");
  json_builder_add_string_value (b, row->bench);
  json_builder_set_member_name (b, "what");
  json_builder_add_string_value (b, row->what);
  add_number (b, "value", row->value);
  json_builder_set_member_name (b, "unit");
  json_builder_add_string_value (b, row->unit);
  if (row->floor > 0)
    {
      add_number (b, "floor", row->floor);
      json_builder_set_member_name (b, "floor_what");
      json_builder_add_string_value (b, row->floor_what ? row->floor_what : "");
    }
  if (row->ratio > 0)
    add_number (b, "ratio", row->ratio);
  if (row->target > 0)
    {
      add_number (b, "target", row->target);
      json_builder_set_member_name (b, "target_is_value");
      json_builder_add_boolean_value (b, row->target_is_value);
      json_builder_set_member_name (b, "higher_is_better");
      json_builder_add_boolean_value (b, row->higher_is_better);
    }
  json_builder_end_object (b);
  root = json_builder_get_root (b);
  gen = json_generator_new ();
  json_generator_set_root (gen, root);
  text = json_generator_to_data (gen, NULL);
  line = g_strconcat (text, "\n", NULL);
  len = strlen (line);

  /* O_APPEND and one write per row: several benchmarks may share the file. */
  fd = open (path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0 || write (fd, line, len) != (ssize_t) len)
    fprintf (stderr, "bench: cannot add a row to the summary '%s': %s\n", path,
             g_strerror (fd < 0 ? errno : errno ? errno : EIO));
  if (fd >= 0)
    close (fd);
}
