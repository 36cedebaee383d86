"""kafka-python as an old client: produce two keyed records and read the
partition back, with api_version pinned (argv[3], e.g. 0.10), so it speaks
that Kafka's Produce and Fetch versions and message format."""
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition

bootstrap, topic = sys.argv[1], sys.argv[2]
version = tuple(int(p) for p in sys.argv[3].split("."))

producer = KafkaProducer(bootstrap_servers=bootstrap, api_version=version, acks=1,
                         compression_type=sys.argv[4] if len(sys.argv) > 4 else None)
for key, value in ((b"k1", b"hello"), (b"k2", b"world")):
    producer.send(topic, key=key, value=value, partition=0).get(timeout=30)
producer.close()

consumer = KafkaConsumer(bootstrap_servers=bootstrap, api_version=version,
                         enable_auto_commit=False, consumer_timeout_ms=15000)
partition = TopicPartition(topic, 0)
consumer.assign([partition])
consumer.seek_to_beginning(partition)
read = 0
for record in consumer:
    print("%s=%s@%d" % (record.key.decode(), record.value.decode(), record.offset))
    read += 1
    if read == 2:
        break
consumer.close()
