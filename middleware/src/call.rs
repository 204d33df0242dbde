//! A request on its way through the session stack, and the read-time step every request gets.
//!
//! The stack ([`StandardStack`](crate::StandardStack)) takes each request in read order and, before its
//! future exists, runs the **read-time step** synchronously: the read-time part of each custom
//! layer ([`SessionLayer::admit`](crate::SessionLayer::admit)), the lifecycle's decision, then
//! the router's lookup, params validation and the handler's own read-time part
//! ([`Handler::admit`](crate::Handler::admit)). Whatever that step decides travels with the
//! request as a [`Call`] through the layers' `call`s: the answer it settled on, or the
//! handler's future, which is already made. So a layer that awaits before it calls the service
//! it wraps, or a handler that awaits first, delays work but never changes a decision that
//! read order makes.

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::marker::PhantomData;
use std::ops::Deref;

use wsp_protocol::{Id, Request, Response};

use crate::notify::BoxResponseFuture;

/// Values of any type, one per type: what a layer's read-time step leaves for the handler
/// (in [`Call::extensions_mut`]), or what a connection tells every handler. Empty, it holds no
/// allocation.
#[derive(Default)]
pub struct Extensions {
    #[allow(clippy::box_collection)] // one word when empty, as `http::Extensions` does
    map: Option<Box<HashMap<TypeId, Box<dyn Any + Send + Sync>>>>,
}

impl Extensions {
    /// No values.
    pub fn new() -> Self {
        Extensions::default()
    }

    /// Stores `value`, returning the value of its type stored before, if any.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) -> Option<T> {
        self.map
            .get_or_insert_with(Box::default)
            .insert(TypeId::of::<T>(), Box::new(value))
            .and_then(|old| old.downcast().ok().map(|old| *old))
    }

    /// The value of type `T`, if one is stored.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<&T> {
        self.map
            .as_ref()
            .and_then(|map| map.get(&TypeId::of::<T>()))
            .and_then(|value| value.downcast_ref())
    }

    /// Whether nothing is stored.
    pub fn is_empty(&self) -> bool {
        self.map.as_ref().is_none_or(|map| map.is_empty())
    }
}

impl std::fmt::Debug for Extensions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let count = self.map.as_ref().map_or(0, |map| map.len());
        f.debug_struct("Extensions")
            .field("values", &count)
            .finish()
    }
}

/// What the read-time step settled for a call.
pub(crate) enum Settled {
    /// Nothing yet (no step has answered; the router has not run).
    Open,
    /// Answered at read time (a layer, the lifecycle, or the router: `-32601`, `-32602`).
    Answered(Response),
    /// The handler's future, made at read time and not yet polled.
    Routed(BoxResponseFuture),
}

/// A request inside the session stack: the request as read, what its read-time step settled,
/// and the extensions the step left for the handler. It dereferences to the [`Request`].
pub struct Call {
    request: Request,
    pub(crate) settled: Settled,
    pub(crate) extensions: Extensions,
}

impl Call {
    /// A call nothing has settled yet.
    pub fn new(request: Request) -> Self {
        Call {
            request,
            settled: Settled::Open,
            extensions: Extensions::new(),
        }
    }

    /// The request as read.
    pub fn request(&self) -> &Request {
        &self.request
    }

    /// Answers the call now, at read time: no later read-time step runs for it, and no handler.
    /// Only the read-time step may answer; a layer's `call` answers by returning a response.
    pub fn answer(&mut self, response: Response) {
        self.settled = Settled::Answered(response);
    }

    /// An error answer for this call's id.
    pub fn reject(&mut self, error: wsp_protocol::ErrorObjectOwned) {
        let response = Response::error(self.request.id.clone(), error);
        self.answer(response);
    }

    /// Whether the read-time step answered the call (so no handler runs for it).
    pub fn is_answered(&self) -> bool {
        matches!(self.settled, Settled::Answered(_))
    }

    /// What the read-time step leaves for the handler's [`Context`](crate::Context).
    pub fn extensions_mut(&mut self) -> &mut Extensions {
        &mut self.extensions
    }

    /// The request's id.
    pub fn id(&self) -> &Id {
        &self.request.id
    }
}

impl Deref for Call {
    type Target = Request;

    fn deref(&self) -> &Request {
        &self.request
    }
}

impl std::fmt::Debug for Call {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Call")
            .field("id", &self.request.id)
            .field("method", &self.request.method)
            .field("answered", &self.is_answered())
            .finish_non_exhaustive()
    }
}

impl From<Request> for Call {
    fn from(request: Request) -> Self {
        Call::new(request)
    }
}

/// Proof that code runs in the read-time step of a request: only the stack makes one, and it
/// lives no longer than that step, so it can't be carried into a future. Work that read order
/// decides (a use of an environment, a delete's mark) asks for a `&ReadTime` and so can only
/// happen there.
pub struct ReadTime<'a> {
    request: &'a Request,
    /// Not `Send`: a read-time proof stays on the thread that reads.
    _not_send: PhantomData<*const ()>,
}

impl<'a> ReadTime<'a> {
    pub(crate) fn new(request: &'a Request) -> Self {
        ReadTime {
            request,
            _not_send: PhantomData,
        }
    }

    /// The request being read.
    pub fn request(&self) -> &Request {
        self.request
    }
}

impl std::fmt::Debug for ReadTime<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReadTime")
            .field("id", &self.request.id)
            .finish()
    }
}
