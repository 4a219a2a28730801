//! The buses the bus suites run on: the in-process bus, and a Redis bus on
//! a Redis server of the test's own (skipped loudly without
//! `redis-server`, a failure under `CI=true`).

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use oxiscope_storage::{InMemoryBus, MessageBus, RedisBus, RedisBusOptions, Retained, Retention};
use oxiscope_test_support::servers::redis::TestRedis;

/// A bus under test, and what it needs to live.
pub(crate) struct TestBus {
    pub(crate) bus: Arc<dyn MessageBus>,
    kind: Kind,
}

enum Kind {
    Memory(InMemoryBus),
    Redis {
        bus: RedisBus,
        options: RedisBusOptions,
        server: Arc<TestRedis>,
    },
}

impl Deref for TestBus {
    type Target = dyn MessageBus;

    fn deref(&self) -> &Self::Target {
        &*self.bus
    }
}

impl TestBus {
    pub(crate) fn memory() -> Self {
        Self::memory_with(Retention::default())
    }

    pub(crate) fn memory_with(retention: Retention) -> Self {
        let bus = InMemoryBus::with_retention(retention);
        Self {
            bus: Arc::new(bus.clone()),
            kind: Kind::Memory(bus),
        }
    }

    /// A Redis bus on a server of its own; `None` when skipped.
    pub(crate) async fn redis() -> Option<Self> {
        Self::redis_with(RedisBusOptions::default()).await
    }

    pub(crate) async fn redis_with(options: RedisBusOptions) -> Option<Self> {
        let server = Arc::new(TestRedis::start()?);
        Some(Self::redis_on(server, options).await)
    }

    async fn redis_on(server: Arc<TestRedis>, options: RedisBusOptions) -> Self {
        let bus = RedisBus::connect(&server.url(), options.clone())
            .await
            .expect("connect to the test redis");
        Self {
            bus: Arc::new(bus.clone()),
            kind: Kind::Redis {
                bus,
                options,
                server,
            },
        }
    }

    /// Another replica: a second Redis bus on the same server and prefix.
    pub(crate) async fn replica(&self) -> Self {
        match &self.kind {
            Kind::Redis {
                options, server, ..
            } => Self::redis_on(Arc::clone(server), options.clone()).await,
            Kind::Memory(_) => panic!("the in-process bus has no replicas"),
        }
    }

    /// Another deployment: a Redis bus on the same server with `prefix`.
    pub(crate) async fn neighbour(&self, prefix: &str) -> Self {
        match &self.kind {
            Kind::Redis { server, .. } => {
                let options = RedisBusOptions::default().with_prefix(prefix);
                Self::redis_on(Arc::clone(server), options).await
            }
            Kind::Memory(_) => panic!("the in-process bus has no neighbours"),
        }
    }

    /// The Redis server, to stop it.
    pub(crate) fn into_server(self) -> Option<(Arc<dyn MessageBus>, Arc<TestRedis>)> {
        match self.kind {
            Kind::Redis { server, .. } => Some((self.bus, server)),
            Kind::Memory(_) => None,
        }
    }

    /// The Redis server's URL.
    pub(crate) fn server_url(&self) -> Option<String> {
        match &self.kind {
            Kind::Redis { server, .. } => Some(server.url()),
            Kind::Memory(_) => None,
        }
    }

    /// What the bus keeps now.
    pub(crate) async fn retained(&self) -> Retained {
        match &self.kind {
            Kind::Memory(bus) => bus.retained(),
            Kind::Redis { bus, .. } => bus.retained().await.expect("count redis keys"),
        }
    }
}

/// A bus that keeps at most `idle_logs` idle logs, each for at most `ttl`.
pub(crate) async fn with_retention(
    redis: bool,
    idle_logs: usize,
    ttl: Duration,
) -> Option<TestBus> {
    let retention = Retention {
        idle_logs,
        idle_ttl: ttl,
        ..Retention::default()
    };
    if redis {
        TestBus::redis_with(RedisBusOptions::default().with_retention(retention)).await
    } else {
        Some(TestBus::memory_with(retention))
    }
}

/// A bus whose replay logs keep at most `log_bytes` of payload each.
pub(crate) async fn with_log_bytes(redis: bool, log_bytes: usize) -> Option<TestBus> {
    let retention = Retention {
        log_bytes,
        ..Retention::default()
    };
    if redis {
        TestBus::redis_with(RedisBusOptions::default().with_retention(retention)).await
    } else {
        Some(TestBus::memory_with(retention))
    }
}

/// Runs each named `async fn(TestBus)` of the enclosing module on the
/// in-process bus (`memory::<name>`) and on Redis (`redis::<name>`).
macro_rules! on_every_bus {
    ($($name:ident),* $(,)?) => {
        mod memory {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::suite::bus_backend::TestBus::memory()).await;
                }
            )*
        }
        mod redis {
            $(
                #[tokio::test]
                async fn $name() {
                    if let Some(bus) = $crate::suite::bus_backend::TestBus::redis().await {
                        super::$name(bus).await;
                    }
                }
            )*
        }
    };
}
pub(crate) use on_every_bus;
