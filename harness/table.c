/* Aligned text tables for the command's reports. */
#include "table.h"

#include "harness.h"

#include <stdio.h>
#include <string.h>

void
table_init (Table *t, const char *const *header)
{
  t->rows = g_ptr_array_new_with_free_func ((GDestroyNotify) g_strfreev);
  t->n_cols = g_strv_length ((GStrv) header);
  g_ptr_array_add (t->rows, g_strdupv ((GStrv) header));
}

/* Takes ownership of @cells (n_cols strings; NULL prints as "-"). */
void
table_add (Table *t, char **cells)
{
  GStrv row = g_new0 (char *, t->n_cols + 1);

  for (guint i = 0; i < t->n_cols; i++)
    row[i] = cells[i] ? cells[i] : g_strdup ("-");
  g_ptr_array_add (t->rows, row);
}

/* Prints the table (when it has a row besides the header) and frees it. */
void
table_fprint (Table *t, FILE *f, const char *indent)
{
  g_autofree guint *widths = g_new0 (guint, t->n_cols);

  for (guint r = 0; r < t->rows->len && t->rows->len > 1; r++)
    {
      GStrv row = t->rows->pdata[r];

      for (guint c = 0; c < t->n_cols; c++)
        widths[c] = MAX (widths[c], (guint) g_utf8_strlen (row[c], -1));
    }
  for (guint r = 0; r < t->rows->len && t->rows->len > 1; r++)
    {
      GStrv row = t->rows->pdata[r];
      GString *line = g_string_new (indent);

      for (guint c = 0; c < t->n_cols; c++)
        {
          g_string_append (line, row[c]);
          if (c + 1 < t->n_cols)
            for (guint pad = (guint) g_utf8_strlen (row[c], -1); pad < widths[c] + 2; pad++)
              g_string_append_c (line, ' ');
        }
      fprintf (f, "%s\n", line->str);
      g_string_free (line, TRUE);
    }
  g_ptr_array_unref (t->rows);
}

void
table_print (Table *t, const char *indent)
{
  table_fprint (t, harness_out (), indent);
}

char *
argv_text (const char *const *argv)
{
  GString *out = g_string_new (NULL);

  for (guint i = 0; argv && argv[i]; i++)
    {
      const char *arg = argv[i];

      if (i)
        g_string_append_c (out, ' ');
      /* Escaped already; quote what would not read as one word. */
      if (*arg == '\0' || strpbrk (arg, " '\"") != NULL)
        g_string_append_printf (out, "'%s'", arg);
      else
        g_string_append (out, arg);
    }
  return g_string_free (out, FALSE);
}
