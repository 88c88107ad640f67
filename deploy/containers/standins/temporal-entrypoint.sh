#!/bin/sh
set -eu
: "${DB:=postgres12}" "${DB_PORT:=5432}" "${POSTGRES_SEEDS:?}" "${POSTGRES_USER:?}" "${POSTGRES_PWD:?}" "${DEFAULT_NAMESPACE:=default}"
[ "$DB" = postgres12 ] || { echo "temporal stand-in: only DB=postgres12" >&2; exit 1; }
sql() { temporal-sql-tool --plugin postgres12 --ep "$POSTGRES_SEEDS" -p "$DB_PORT" -u "$POSTGRES_USER" --pw "$POSTGRES_PWD" "$@"; }
i=0
until timeout 2 bash -c "</dev/tcp/$POSTGRES_SEEDS/$DB_PORT" 2>/dev/null; do
  i=$((i + 1)); [ $i -lt 120 ] || { echo "temporal stand-in: PostgreSQL at $POSTGRES_SEEDS:$DB_PORT never answered" >&2; exit 1; }
  sleep 1
done
sleep 2 # the port opens before PostgreSQL accepts logins
for pair in temporal:temporal temporal_visibility:visibility; do
  db=${pair%%:*} schema=${pair#*:}
  sql --db "$db" create-database >/dev/null 2>&1 || true
  sql --db "$db" setup-schema -v 0.0 >/dev/null 2>&1 || true # already there on a restart
  sql --db "$db" update-schema -d "/etc/temporal/schema/postgresql/v12/$schema/versioned"
done
mkdir -p /etc/temporal/config/dynamicconfig
cp /etc/temporal/config-template/dynamicconfig/* /etc/temporal/config/dynamicconfig/
ip=$(hostname -i | awk '{print $1}')
sed -e "s/127.0.0.1:5432/$POSTGRES_SEEDS:$DB_PORT/" -e "s/user: \"temporal\"/user: \"$POSTGRES_USER\"/" \
    -e "s/password: \"temporal\"/password: \"$POSTGRES_PWD\"/" -e "s/broadcastAddress: \"127.0.0.1\"/broadcastAddress: \"$ip\"/" \
    -e "s/bindOnLocalHost: true/bindOnIP: \"0.0.0.0\"/" -e "s/localhost:7233/$ip:7233/" \
    /etc/temporal/config-template/development-postgres12.yaml >/etc/temporal/config/development-postgres12.yaml
cd /etc/temporal
temporal-server --root /etc/temporal --config config --env development-postgres12 --allow-no-auth start &
server=$!
trap 'kill -TERM $server; wait $server' TERM INT
until temporal operator cluster health --address 127.0.0.1:7233 2>/dev/null | grep -q SERVING; do
  kill -0 $server || exit 1
  sleep 1
done
temporal operator namespace describe --address 127.0.0.1:7233 -n "$DEFAULT_NAMESPACE" >/dev/null 2>&1 \
  || temporal operator namespace create --address 127.0.0.1:7233 -n "$DEFAULT_NAMESPACE"
echo "temporal stand-in: serving, namespace $DEFAULT_NAMESPACE"
wait $server
