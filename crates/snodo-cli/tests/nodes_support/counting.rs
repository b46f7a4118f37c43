//! A TCP relay on loopback in front of a server (Redis, PostgreSQL) that
//! counts the bytes its clients send to it: what the nodes write to the
//! server, whatever the protocol.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A running relay.
pub struct Counting {
    /// The relay's address.
    pub addr: SocketAddr,
    sent: Arc<AtomicU64>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Counting {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Counting {
    /// Relays every connection to `upstream`.
    pub async fn start(upstream: SocketAddr) -> Counting {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let sent = Arc::new(AtomicU64::new(0));
        let counter = sent.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let counter = counter.clone();
                tokio::spawn(async move {
                    let Ok(server) = TcpStream::connect(upstream).await else {
                        return;
                    };
                    // Relayed as it comes: no delay the clients did not ask for.
                    let _ = client.set_nodelay(true);
                    let _ = server.set_nodelay(true);
                    let (mut client_rx, mut client_tx) = client.into_split();
                    let (mut server_rx, mut server_tx) = server.into_split();
                    let up = async {
                        let mut buf = vec![0u8; 64 * 1024];
                        loop {
                            match client_rx.read(&mut buf).await {
                                Ok(0) | Err(_) => break,
                                Ok(n) => {
                                    counter.fetch_add(n as u64, Ordering::Relaxed);
                                    if server_tx.write_all(&buf[..n]).await.is_err() {
                                        break;
                                    }
                                }
                            }
                        }
                        let _ = server_tx.shutdown().await;
                    };
                    let down = async {
                        let _ = tokio::io::copy(&mut server_rx, &mut client_tx).await;
                        let _ = client_tx.shutdown().await;
                    };
                    tokio::join!(up, down);
                });
            }
        });
        Counting { addr, sent, task }
    }

    /// Bytes the clients sent so far.
    pub fn sent(&self) -> u64 {
        self.sent.load(Ordering::Relaxed)
    }
}
