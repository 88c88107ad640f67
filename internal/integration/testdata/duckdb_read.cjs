// duckdb_read.cjs GLOB: reads Parquet files with DuckDB (an independent
// reader) and prints {"rows": N, "columns": [[name, type], ...]} as JSON.
// NODE_PATH must point at the node_modules that `make setup` installs.
const { DuckDBInstance } = require('@duckdb/node-api');

async function main() {
  const glob = process.argv[2].replace(/'/g, "''");
  const inst = await DuckDBInstance.create(':memory:');
  const conn = await inst.connect();
  const count = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM read_parquet('${glob}')`);
  const desc = await conn.runAndReadAll(`DESCRIBE SELECT * FROM read_parquet('${glob}')`);
  const ids = await conn.runAndReadAll(`SELECT count(DISTINCT id)::INTEGER AS n FROM read_parquet('${glob}')`);
  console.log(JSON.stringify({
    rows: count.getRowObjects()[0].n,
    distinct_ids: ids.getRowObjects()[0].n,
    columns: desc.getRowObjects().map((o) => [o.column_name, o.column_type]),
  }));
}
main().catch((e) => { console.error(e); process.exit(1); });
