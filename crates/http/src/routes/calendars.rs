//! Calendars: `/api/calendaraccounts` (where the enterprise's room calendars are read, and as
//! whom) and `/api/endpoints/{id}/meetings` (a room's upcoming meetings and what it would dial).

use crate::AppState;
use crate::body::read_json_object;
use crate::caller::{Caller, query_param};
use crate::error::ApiResult;
use crate::table::{Access, Body, Description, Doc, Method, Operation, Param, Success, Tag};
use actix_web::{HttpRequest, HttpResponse, web};
use roomlink_domain::ErrorKind as E;
use roomlink_domain::access::Operation as Op;
use roomlink_domain::ids::EndpointId;

pub(super) const LIST_ACCOUNTS: Operation = Operation {
    method: Method::Get,
    path: "/api/calendaraccounts",
    handler: |route| route.to(list_accounts),
    access: Access::Caller(Op::ListCalendarAccounts),
    doc: Doc::Described(Description {
        id: "calendaraccounts.list",
        tag: Tag::Calendars,
        summary: "List calendar accounts",
        description: "One per calendar type the enterprise has set up; never a password.",
        params: &[],
        body: Body::None,
        success: Success::JsonList("CalendarAccount"),
        errors: &[],
    }),
};

async fn list_accounts(caller: Caller, state: web::Data<AppState>) -> ApiResult<HttpResponse> {
    Ok(HttpResponse::Ok().json(state.services.calendars.accounts(&caller.0).await?))
}

pub(super) const PUT_ACCOUNT: Operation = Operation {
    method: Method::Put,
    path: "/api/calendaraccounts/{calendarType}",
    handler: |route| route.to(put_account),
    access: Access::Caller(Op::PutCalendarAccount),
    doc: Doc::Described(Description {
        id: "calendaraccounts.put",
        tag: Tag::Calendars,
        summary: "Set the calendar account of a calendar type",
        description: "Where rooms whose `calendarType` is this type have their calendars \
            (CalDAV: each room's calendar is the collection `{baseUrl}/{calendarId}/`), and as \
            whom. The password is sealed and never returned; omit it (or send null) to keep \
            the stored one, send \"\" to remove it. Only CALDAV is read so far.",
        params: &[Param::CalendarType],
        body: Body::Json("CalendarAccountInput"),
        success: Success::Json("CalendarAccount"),
        errors: &[E::Invalid],
    }),
};

async fn put_account(
    caller: Caller,
    calendar_type: web::Path<String>,
    req: HttpRequest,
    body: web::Payload,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let body = read_json_object(&req, body, "CalendarAccount").await?;
    let account = state
        .services
        .calendars
        .put_account(&caller.0, &calendar_type, &body)
        .await?;
    Ok(HttpResponse::Ok().json(account))
}

pub(super) const DELETE_ACCOUNT: Operation = Operation {
    method: Method::Delete,
    path: "/api/calendaraccounts/{calendarType}",
    handler: |route| route.to(delete_account),
    access: Access::Caller(Op::DeleteCalendarAccount),
    doc: Doc::Described(Description {
        id: "calendaraccounts.delete",
        tag: Tag::Calendars,
        summary: "Remove the calendar account of a calendar type",
        description: "Rooms of this calendar type then have no readable calendar.",
        params: &[Param::CalendarType],
        body: Body::None,
        success: Success::NoContent,
        errors: &[E::Invalid, E::NotFound],
    }),
};

async fn delete_account(
    caller: Caller,
    calendar_type: web::Path<String>,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    state
        .services
        .calendars
        .delete_account(&caller.0, &calendar_type)
        .await?;
    Ok(HttpResponse::NoContent().finish())
}

pub(super) const MEETINGS: Operation = Operation {
    method: Method::Get,
    path: "/api/endpoints/{id}/meetings",
    handler: |route| route.to(meetings),
    access: Access::Caller(Op::ListMeetings),
    doc: Doc::Described(Description {
        id: "endpoints.meetings",
        tag: Tag::Calendars,
        summary: "A room's upcoming meetings",
        description: "The events of the room's calendar (its `calendarId`, read through the \
            enterprise's account of its `calendarType`) that overlap the window, recurring \
            ones as occurrences, cancelled ones left out, in start order; each with what the \
            room would dial (the parameters of `join`) or why its meeting link cannot be \
            dialled. The calendar is read at request time; a calendar system that cannot be \
            read is `CalendarServerException` naming the calendarId.",
        params: &[Param::ENDPOINT_ID, Param::Query("from"), Param::Query("to")],
        body: Body::None,
        success: Success::JsonList("Meeting"),
        errors: &[E::NotFound, E::Invalid, E::CalendarServerException],
    }),
};

async fn meetings(
    caller: Caller,
    id: web::Path<String>,
    req: HttpRequest,
    state: web::Data<AppState>,
) -> ApiResult<HttpResponse> {
    let id = EndpointId::parse(&id)?;
    let (from, to) = (query_param(&req, "from"), query_param(&req, "to"));
    let meetings = state
        .services
        .calendars
        .meetings(&caller.0, &id, from.as_deref(), to.as_deref())
        .await?;
    Ok(HttpResponse::Ok().json(meetings))
}
