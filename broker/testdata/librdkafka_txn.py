"""librdkafka's transactional producer and read_committed consumer (confluent-kafka-python).

Usage: librdkafka_txn.py BOOTSTRAP TOPIC

Commits a transaction of three records, aborts one of two, commits one more, then reads TOPIC from
the start with isolation.level=read_committed and prints each value on its own line.
"""
import sys

from confluent_kafka import Consumer, Producer, TopicPartition

bootstrap, topic = sys.argv[1], sys.argv[2]

producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": "librdkafka-app"})
producer.init_transactions(30)
for values, commit in ((["c1", "c2", "c3"], True), (["a1", "a2"], False), (["c4"], True)):
    producer.begin_transaction()
    for v in values:
        producer.produce(topic, value=v.encode(), partition=0)
    producer.flush(30)
    if commit:
        producer.commit_transaction(30)
    else:
        producer.abort_transaction(30)

consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": "librdkafka-reader",
                     "isolation.level": "read_committed", "enable.auto.commit": False,
                     "auto.offset.reset": "earliest"})
consumer.assign([TopicPartition(topic, 0, 0)])
got = []
while len(got) < 4:
    msg = consumer.poll(30)
    if msg is None:
        sys.exit("timed out after %d records" % len(got))
    if msg.error():
        sys.exit("consume: %s" % msg.error())
    got.append(msg.value().decode())
# Nothing else is committed: a further poll returns no record.
msg = consumer.poll(1)
if msg is not None and not msg.error():
    got.append(msg.value().decode())
consumer.close()
print("\n".join(got))
