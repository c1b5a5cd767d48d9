//! Clio-DF's call format: the arguments after the `OffloadCallReq` of an
//! `OFFLOAD_CALL` to [`crate::OFFLOAD_ID`], its results and its refusal
//! codes. The one definition lives with the firmware's offload
//! (`clio_slowpath::offload::df::proto`, `no_std`), the one
//! implementation [`crate::DfOffload`] serves; see its documentation for
//! the layout.

pub use clio_slowpath::offload::df::proto::{
    aggregate_result, aggregate_result_bytes, code, fits, op, pred, select_result,
    select_result_bytes, Aggregate, Select, AGGREGATE_LEN, AGGREGATE_RESULT_LEN, MAX_ROWS,
    SELECT_LEN, SELECT_RESULT_LEN,
};
