// Run by a test as a child process, synchronously, so that the test's own event loop is blocked meanwhile (as a
// frozen Lambda's): kills connections by id from a session of its own and returns once the server lists none of
// them. Arguments: the server URL (mysql://user:password@host:port), then the connection ids.
import mysql from 'mysql2/promise';

const [url, ...ids] = process.argv.slice(2);
const u = new URL(url);
const admin = await mysql.createConnection({
  host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) || 'root',
  password: u.password ? decodeURIComponent(u.password) : undefined,
});
for (const id of ids) await admin.query(`KILL CONNECTION ${Number(id)}`);
const deadline = Date.now() + 10_000;
for (;;) {
  const [rows] = await admin.query('SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE ID IN (?)', [ids.map(Number)]);
  if (Number(rows[0].n) === 0) break;
  if (Date.now() > deadline) throw new Error(`connections ${ids.join(', ')} are still open`);
  await new Promise((resolve) => setTimeout(resolve, 20));
}
await admin.end();
