//! The suites against the parts snodo ships in memory: they pass there, so a
//! failure elsewhere is the other part's.

use snodo::server::events::bus::MemoryBus;
use snodo::task::MemoryTaskStore;

#[tokio::test]
async fn the_memory_bus_keeps_the_bus_contract() {
    let bus = MemoryBus::new();
    snodo_test::event_bus::run(|| std::future::ready(bus.clone())).await;
}

#[tokio::test]
async fn the_memory_store_keeps_the_store_contract() {
    snodo_test::task_store::run(MemoryTaskStore::new).await;
}

#[tokio::test]
async fn the_memory_directory_keeps_the_directory_contract() {
    let idle = std::time::Duration::from_millis(600);
    let directory = snodo::server::legacy::MemoryDirectory::new(100, idle);
    snodo_test::session_directory::run(std::sync::Arc::new(directory), idle).await;
}
