/* Aligned text tables for the command's reports (run, gate, show). */
#pragma once

#include <glib.h>
#include <stdio.h>

typedef struct {
  GPtrArray *rows;   /* GStrv, each with n_cols cells */
  guint n_cols;
} Table;

/* A table whose first row is @header (its length sets the columns). */
void table_init (Table *t, const char *const *header);
/* Takes ownership of @cells (n_cols strings; NULL prints as "-"). */
void table_add (Table *t, char **cells);
/* Prints the table (when it has a row besides the header), each line after
 * @indent, and frees it. */
void table_print (Table *t, const char *indent);
/* The same on @f. */
void table_fprint (Table *t, FILE *f, const char *indent);
/* An argv (already escaped) as one line, quoting what would not read as one
 * word.  Transfer full. */
char *argv_text (const char *const *argv);
