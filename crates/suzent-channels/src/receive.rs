//! How the platform clients turn their receive loops into [`Channel::receive`] streams: a
//! [`Receiver`] gives one message (or one error) each time the stream is polled; polling
//! platforms (Telegram's `getUpdates`, Matrix's `/sync`) are a [`Poller`] whose batches
//! [`Polling`] hands out one by one, asking from the next cursor only when the batch is used up
//! (which acknowledges it).
//!
//! [`Channel::receive`]: crate::Channel::receive

use crate::{ChannelError, Received};
use futures::stream::{self, BoxStream, StreamExt};
use std::collections::VecDeque;
use std::future::Future;
use std::sync::Arc;

/// One platform's receive loop.
pub(crate) trait Receiver: Send + 'static {
    /// The next message, or one error (the stream goes on after it).
    fn next(&mut self) -> impl Future<Output = Result<Received, ChannelError>> + Send;
}

/// The endless stream of `receiver`'s messages.
pub(crate) fn stream_of(
    receiver: impl Receiver,
) -> BoxStream<'static, Result<Received, ChannelError>> {
    stream::unfold(receiver, |mut receiver| async move {
        let next = receiver.next().await;
        Some((next, receiver))
    })
    .boxed()
}

/// A platform read by polling from a cursor.
pub(crate) trait Poller: Send + Sync + 'static {
    /// Where a poll starts (Telegram's update offset, Matrix's `since`); the default is the
    /// first poll's.
    type Cursor: Clone + Default + Send;

    /// One poll from `cursor`: the messages (and presses) in it and the cursor after them.
    fn poll(
        &self,
        cursor: Self::Cursor,
    ) -> impl Future<Output = Result<(Vec<Received>, Self::Cursor), ChannelError>> + Send;
}

/// A [`Poller`]'s batches, one message at a time.
pub(crate) struct Polling<P: Poller> {
    poller: Arc<P>,
    cursor: P::Cursor,
    queued: VecDeque<Received>,
}

impl<P: Poller> Polling<P> {
    /// Polling `poller` from its first cursor.
    pub(crate) fn new(poller: Arc<P>) -> Polling<P> {
        Polling {
            poller,
            cursor: P::Cursor::default(),
            queued: VecDeque::new(),
        }
    }
}

impl<P: Poller> Receiver for Polling<P> {
    async fn next(&mut self) -> Result<Received, ChannelError> {
        loop {
            if let Some(next) = self.queued.pop_front() {
                return Ok(next);
            }
            let (messages, next) = self.poller.poll(self.cursor.clone()).await?;
            self.cursor = next;
            self.queued.extend(messages);
        }
    }
}
