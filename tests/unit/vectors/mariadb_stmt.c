// SPDX-License-Identifier: GPL-2.0
/*
 * The client my_stmt.bin was recorded from (README): libmariadb's prepared
 * statements against the relay on port 13307, the binary protocol's
 * COM_STMT_PREPARE, COM_STMT_EXECUTE and COM_STMT_CLOSE, two of them
 * failing. Not part of the build (it needs libmariadb-dev):
 *   cc mariadb_stmt.c -I/usr/include/mariadb -lmariadb -o mariadb_stmt
 */
#include <stdio.h>
#include <string.h>

#include <mysql.h>

static MYSQL_STMT *prepare(MYSQL *m, const char *sql)
{
	MYSQL_STMT *s = mysql_stmt_init(m);

	if (s && mysql_stmt_prepare(s, sql, strlen(sql)))
		printf("prepare: %s\n", mysql_stmt_error(s));
	return s;
}

static void execute(MYSQL_STMT *s, int *id)
{
	MYSQL_BIND b;

	memset(&b, 0, sizeof(b));
	b.buffer_type = MYSQL_TYPE_LONG;
	b.buffer = id;
	mysql_stmt_bind_param(s, &b);
	if (mysql_stmt_execute(s))
		printf("execute: %s\n", mysql_stmt_error(s));
	else if (!mysql_stmt_store_result(s))
		printf("rows %llu\n", (unsigned long long)mysql_stmt_num_rows(s));
}

int main(void)
{
	MYSQL *m = mysql_init(NULL);
	MYSQL_STMT *s;
	int id = 2;

	if (!mysql_real_connect(m, "127.0.0.1", "app", "secret", "d", 13307, NULL, 0)) {
		printf("%s\n", mysql_error(m));
		return 1;
	}
	s = prepare(m, "select id, v from t where id >= ?");
	execute(s, &id);
	mysql_stmt_close(s);
	mysql_stmt_close(prepare(m, "select * from nosuch"));
	s = prepare(m, "insert into t values (?, 'p')");
	id = 1;
	execute(s, &id);
	mysql_stmt_close(s);
	mysql_ping(m);
	mysql_close(m);
	return 0;
}
