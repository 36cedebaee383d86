package broker

// Config sources, as DescribeConfigs v1+ reports them.
const (
	sourceTopicConfig          int8 = 1 // DYNAMIC_TOPIC_CONFIG: /config/topics/<t>
	sourceDynamicBroker        int8 = 2 // DYNAMIC_BROKER_CONFIG: /config/brokers/<id>
	sourceDynamicDefault       int8 = 3 // DYNAMIC_DEFAULT_BROKER_CONFIG: /config/brokers/<default>
	sourceStaticBrokerConfig   int8 = 4 // STATIC_BROKER_CONFIG: server.properties
	sourceDefaultConfig        int8 = 5 // DEFAULT_CONFIG: Kafka's default
	configResourceTopic        int8 = 2
	configResourceBroker       int8 = 4
	configResourceBrokerLogger int8 = 8
)
